# websec: the Reflex UI and the JSON API served together on one port (3000), Reflex prod mode.
#
#   docker build -t websec .
#   docker run --init -p 3000:3000 --env-file .env -v websec-data:/app/var websec
#
# Same toolchain as `make run`: Python packages from requirements.txt, Node/npm from Debian, and bun
# from the npm registry (Reflex 0.10.1 would otherwise download bun from the internet at start).
FROM python:3.11-slim

ARG BUN_VERSION=1.4.5
ARG NPM_CONFIG_REGISTRY=https://registry.npmjs.org/

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NPM_CONFIG_REGISTRY=${NPM_CONFIG_REGISTRY} \
    PATH=/opt/bun/node_modules/.bin:${PATH} \
    REFLEX_USE_SYSTEM_BUN=1 \
    REFLEX_CHECK_LATEST_VERSION=false \
    REFLEX_HTTP_CLIENT_BIND_ADDRESS=0.0.0.0 \
    REFLEX_DIR=/app/.tools/reflex \
    WEBSEC_ENV=production

RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm \
        fonts-noto-core fonts-noto-mono fonts-droid-fallback fonts-nanum fonts-symbola \
    && rm -rf /var/lib/apt/lists/* \
    && npm install --prefix /opt/bun --no-save --no-audit --no-fund --loglevel=error "bun@${BUN_VERSION}" \
    && bun --version

WORKDIR /app
COPY requirements.txt ./
RUN python -m pip install -r requirements.txt

RUN useradd --system --create-home --uid 10001 websec && chown websec:websec /app
COPY --chown=websec:websec . .
USER websec

# Install the JS packages (from reflex.lock/) and compile once at build time, so the container needs no
# network at start and a broken app fails the build. `reflex run --env prod` still recompiles at start
# (a few seconds); the settings check at import must not need production secrets here.
RUN mkdir -p var \
    && WEBSEC_ENV=development reflex export --frontend-only --no-zip

EXPOSE 3000
VOLUME ["/app/var"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:3000/api/health', timeout=4)"

CMD ["reflex", "run", "--env", "prod", "--single-port", "--frontend-port", "3000", "--backend-host", "0.0.0.0"]
