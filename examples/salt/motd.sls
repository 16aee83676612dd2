motd:
  file.managed:
    - name: /etc/motd.brine
    - contents: |
        Managed by Brine on {{ grains['id'] }} ({{ grains['os'] }} {{ grains['osrelease'] }})
