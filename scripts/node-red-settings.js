// Node-RED settings for `npm start`: the project-local user directory, loopback only.
// Everything not set here keeps Node-RED's default.
'use strict';
module.exports = {
  uiHost: process.env.HOST || '127.0.0.1',
  uiPort: Number(process.env.PORT) || 1880,
  flowFile: 'flows.json',
  flowFilePretty: true,
  // Credentials (API keys, private keys) are encrypted in flows_cred.json with this secret.
  // Set CUSTODYFLOW_CREDENTIAL_SECRET to your own value before storing real keys.
  credentialSecret: process.env.CUSTODYFLOW_CREDENTIAL_SECRET || false,
  diagnostics: { enabled: false },
  telemetry: { enabled: false },
  logging: { console: { level: process.env.LOG_LEVEL || 'info', metrics: false, audit: false } },
  editorTheme: { projects: { enabled: false }, tours: false },
};
