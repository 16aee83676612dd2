# The parallel state finishes after the states declared after it have
# started; a state that requires it waits for its real result.
slow:
  cmd.run:
    - name: sleep 0.5; touch /tmp/conf-601/flag
    - parallel: True
needs_slow:
  cmd.run:
    - name: test -e /tmp/conf-601/flag
    - require:
      - cmd: slow
independent:
  test.succeed_without_changes: []
doomed:
  cmd.run:
    - name: exit 3
    - parallel: True
needs_doomed:
  test.succeed_without_changes:
    - require:
      - cmd: doomed
