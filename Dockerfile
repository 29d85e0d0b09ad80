# The ODW webhook service (`odw serve`): built from this checkout's wheel.
#   docker build -t odw .
#   docker run -p 8000:8000 --env-file odw.env -v odw-data:/var/lib/odw odw
# docs/deploy.md says what to set; compose.yaml runs it beside PostgreSQL.

# Build: the project's wheel and every dependency's, so the image needs no
# compiler and installs offline from them.
FROM python:3.12-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
COPY actions ./actions
COPY webhooks ./webhooks
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.12-slim-bookworm
# git: the service lands tasks from git mirrors under ODW_DATA_DIR.
# tini: PID 1 that forwards SIGTERM and reaps the git processes' children.
# Debian's stable release only takes fixes, so its current versions are taken.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git tini \
    && rm -rf /var/lib/apt/lists/*
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links /wheels /wheels/odw-*.whl
RUN groupadd --system --gid 10001 odw \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /var/lib/odw odw
ENV ODW_DATA_DIR=/var/lib/odw \
    PYTHONUNBUFFERED=1
VOLUME ["/var/lib/odw"]
WORKDIR /var/lib/odw
# Numeric, so a platform that requires a non-root user can tell.
USER 10001:10001
EXPOSE 8000
# Exits non-zero when /healthz answers 503 (a part down) or not at all.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
ENTRYPOINT ["tini", "--", "odw", "serve"]
CMD ["--host", "0.0.0.0", "--port", "8000"]
