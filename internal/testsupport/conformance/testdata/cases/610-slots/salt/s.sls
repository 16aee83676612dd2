# Slots are evaluated when the state runs; one that is not for execution
# modules stays as written.
echoed:
  test.show_notification:
    - text: __slot__:salt:test.echo(hello)
path_and_append:
  test.show_notification:
    - text: "__slot__:salt:grains.item(id).id ~ -suffix"
not_salt:
  test.show_notification:
    - text: __slot__:pillar:whatever
