x:
  test.nop: []
