base:
  '*':
    - b
    - a
