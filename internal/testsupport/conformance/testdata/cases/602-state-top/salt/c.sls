c1:
  test.fail_without_changes: []
c2:
  test.succeed_with_changes:
    - require:
      - test: c1
