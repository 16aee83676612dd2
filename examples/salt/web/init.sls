include:
  - motd

web-root:
  file.directory:
    - name: /var/tmp/www
    - makedirs: True

index:
  file.managed:
    - name: /var/tmp/www/index.html
    - contents: "<h1>{{ grains['id'] }}</h1>"
    - require:
      - file: web-root

uptime-report:
  cmd.run:
    - name: uptime > /var/tmp/www/uptime.txt
    - onchanges:
      - file: index
