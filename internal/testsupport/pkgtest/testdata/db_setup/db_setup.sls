# The seeds' db_setup.sls with the package names adapted to the local
# test packages. @ROOT@ and the brinetest-db names are replaced per run
# by internal/pkgtest.DBSetup so that concurrent runs cannot clash.
db_packages:
  pkg.installed:
    - names:
      - brinetest-db-server
      - brinetest-db-client

db_init:
  cmd.run:
    - name: touch @ROOT@/initialized
    - unless: test -f @ROOT@/initialized
    - require:
      - pkg: db_packages

db_config:
  file.managed:
    - name: @ROOT@/brinetest-db.conf
    - source: salt://db_setup/db.conf.jinja
    - template: jinja
    - context:
        max_connections: 100
        listen: 127.0.0.1
    - require:
      - pkg: db_packages

db_service:
  service.running:
    - name: brinetest-db
    - enable: True
    - reload: True
    - watch:
      - file: db_config
