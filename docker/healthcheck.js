// The container's health check (docker/Dockerfile HEALTHCHECK): healthy when Node-RED's admin
// API answers GET /auth/login with 200 on the port and interface docker/settings.js listens on.
// (The image's own check reads /data/settings.js, which this setup does not use.)
'use strict';
const http = require('node:http');

const host = !process.env.HOST || process.env.HOST === '0.0.0.0' || process.env.HOST === '::' ? '127.0.0.1' : process.env.HOST;
const req = http.get({ host, port: Number(process.env.PORT) || 1880, path: '/auth/login', timeout: 4000 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error('timeout')));
req.on('error', () => process.exit(1));
