// Node-RED settings for `npm start`: the project-local user directory, loopback only.
// Everything not set here keeps Node-RED's default.
'use strict';
const host = process.env.HOST || '127.0.0.1';
// The editor has no login here (no adminAuth): keep it on loopback.
if (!/^(127(\.\d{1,3}){3}|localhost|::1)$/.test(host)) {
  throw new Error(`HOST=${host}: this settings file serves the editor without a login, so it listens on loopback only; configure adminAuth in your own settings file to expose it`);
}
// One name for the credential secret, here and in the container (docker/settings.js).
if (process.env.CUSTODYFLOW_CREDENTIAL_SECRET && !process.env.NODE_RED_CREDENTIAL_SECRET) {
  throw new Error('CUSTODYFLOW_CREDENTIAL_SECRET is no longer read: rename it NODE_RED_CREDENTIAL_SECRET (same value), the name the container uses too');
}
module.exports = {
  uiHost: host,
  uiPort: Number(process.env.PORT) || 1880,
  flowFile: 'flows.json',
  flowFilePretty: true,
  // Credentials (API keys, private keys) are always encrypted in flows_cred.json: with
  // NODE_RED_CREDENTIAL_SECRET when set, else with a key Node-RED generates and keeps in
  // .config.runtime.json of the user directory. (Never `false`: that would store them in clear.)
  ...(process.env.NODE_RED_CREDENTIAL_SECRET ? { credentialSecret: process.env.NODE_RED_CREDENTIAL_SECRET } : {}),
  diagnostics: { enabled: false },
  telemetry: { enabled: false },
  logging: { console: { level: process.env.LOG_LEVEL || 'info', metrics: false, audit: false } },
  editorTheme: { projects: { enabled: false }, tours: false },
};
