motd:
  file.managed:
    - name: /var/tmp/brine-motd
    - contents: |
        Managed by Brine on {{ grains['id'] }} ({{ grains['os'] }} {{ grains['osrelease'] }})
