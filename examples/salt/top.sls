base:
  '*':
    - motd
  'web*':
    - web
