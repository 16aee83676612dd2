include:
  - a
b1:
  test.nop: []
