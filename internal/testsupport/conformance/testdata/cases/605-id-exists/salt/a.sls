a1:
  test.nop: []
