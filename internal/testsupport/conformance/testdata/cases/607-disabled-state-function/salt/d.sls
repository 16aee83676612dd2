# A disabled function fails where it would run, and is no longer there
# for requisites.
blocked:
  test.fail_without_changes: []
allowed:
  test.succeed_without_changes: []
needs_blocked:
  test.succeed_without_changes:
    - require:
      - test: blocked
