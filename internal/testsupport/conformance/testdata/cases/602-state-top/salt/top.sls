base:
  '*':
    - a
