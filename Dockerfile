# Daybook in one image: the server serves the built web app and applies migrations on start.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
COPY package.json package-lock.json ./
COPY apps/server/package.json apps/server/
COPY apps/web/package.json apps/web/
COPY packages/contracts/package.json packages/contracts/
COPY prisma ./prisma
COPY prisma.config.ts ./
COPY scripts ./scripts
# Dev dependencies are needed to build the web app; the server runs TypeScript through tsx.
RUN npm ci --include=dev --no-audit --no-fund
COPY . .
RUN npm run build
# Never root at run time: the app and its data belong to the image's unprivileged node user.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:3000/readyz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node_modules/.bin/tsx", "apps/server/src/server.ts"]
