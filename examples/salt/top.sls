base:
  '*':
    - motd
  'host[12]':
    - web
