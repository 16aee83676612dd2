# The umask keyword applies while the state runs; an unparsable one
# fails verify_data.
strict:
  cmd.run:
    - name: test "$(umask)" = 0077
    - umask: '077'
leading_zero:
  cmd.run:
    - name: test "$(umask)" = 0027
    - umask: 0027
bad:
  cmd.run:
    - name: "true"
    - umask: 999
