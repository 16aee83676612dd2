a1:
  test.succeed_without_changes: []
