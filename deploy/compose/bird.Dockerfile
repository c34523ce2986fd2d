# The router of the docker-compose lab: Debian's BIRD 2.
FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends bird2 && rm -rf /var/lib/apt/lists/*
ENTRYPOINT ["bird", "-f", "-c", "/etc/bird/bird.conf", "-s", "/run/bird.ctl"]
