// Node-RED settings for the CustodyFlow container (docker/Dockerfile; docs/going-live.md).
// Everything that differs between installations comes from the environment; nothing secret is
// in this file or in the image. The image's entrypoint passes `--userDir /data`.
//
// | variable | required | what |
// |---|---|---|
// | NODE_RED_CREDENTIAL_SECRET | yes | encrypts flows_cred.json (API keys, private keys, tokens); 16 characters or more, e.g. `openssl rand -hex 32` |
// | CUSTODYFLOW_ADMIN_PASSWORD_HASH | yes | bcrypt hash of the admin's password (`node-red admin hash-pw`) |
// | CUSTODYFLOW_ADMIN_USER | no, `admin` | the admin's user name: every permission (deploy, install, review) |
// | CUSTODYFLOW_OPERATORS | no | reviewers, `name:hash` separated by commas or spaces: they read the flows and vote in the Custody review tab, and cannot deploy |
// | PORT | no, 1880 | the editor's port inside the container |
// | HOST | no, every interface | the interface Node-RED listens on |
// | LOG_LEVEL | no, `info` | fatal, error, warn, info, debug or trace |
//
// Without the secret or the admin's hash, Node-RED does not start: the reason is printed. A
// generated key (Node-RED's default without a secret) would sit in /data beside the file it
// protects, and an editor reachable from outside the container needs a login.
'use strict';

/** The permissions of an operator: see the flows, read and vote on held actions, not deploy. */
const OPERATOR_PERMISSIONS = ['read', 'custody.review.read', 'custody.review.write'];

/** A bcrypt hash as `node-red admin hash-pw` (bcryptjs) writes it. */
const BCRYPT = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

const HASH_HELP =
  'make one with `docker run --rm -it --entrypoint node custodyflow/node-red-custody:local node_modules/node-red/red.js admin hash-pw` ' +
  '(or `npx node-red admin hash-pw` in a clone); in a compose .env file put it in single quotes, and write each $ as $$ inside compose.yaml itself';

/** Stop the start with a message that names the variable. */
function refuse(message) {
  throw new Error(`CustodyFlow container settings: ${message}`);
}

function credentialSecret() {
  const secret = process.env.NODE_RED_CREDENTIAL_SECRET;
  if (!secret) refuse('NODE_RED_CREDENTIAL_SECRET is not set. It encrypts the API keys and private keys in /data/flows_cred.json; set it to a long random value (`openssl rand -hex 32`), keep it outside /data, and never change it afterwards (the credentials could not be read any more)');
  if (secret.length < 16) refuse(`NODE_RED_CREDENTIAL_SECRET is ${secret.length} characters long; use 16 or more (\`openssl rand -hex 32\`)`);
  return secret;
}

function checkedHash(variable, user, hash) {
  if (!BCRYPT.test(hash)) refuse(`${variable}: the password hash of ${JSON.stringify(user)} is not a bcrypt hash ($2b$..., 60 characters; a $ eaten by the shell or by compose is the usual cause); ${HASH_HELP}`);
  return hash;
}

function users() {
  const adminUser = process.env.CUSTODYFLOW_ADMIN_USER || 'admin';
  const adminHash = process.env.CUSTODYFLOW_ADMIN_PASSWORD_HASH;
  if (!adminHash) refuse(`CUSTODYFLOW_ADMIN_PASSWORD_HASH is not set: the editor needs a login; ${HASH_HELP}`);
  const list = [{ username: adminUser, password: checkedHash('CUSTODYFLOW_ADMIN_PASSWORD_HASH', adminUser, adminHash), permissions: '*' }];
  for (const entry of (process.env.CUSTODYFLOW_OPERATORS || '').split(/[\s,]+/).filter(Boolean)) {
    const colon = entry.indexOf(':');
    if (colon <= 0) refuse(`CUSTODYFLOW_OPERATORS: expected name:hash entries separated by commas or spaces, got ${JSON.stringify(entry.slice(0, 20))}...`);
    const username = entry.slice(0, colon);
    if (list.some((u) => u.username === username)) refuse(`CUSTODYFLOW_OPERATORS: the user ${JSON.stringify(username)} is named twice`);
    list.push({ username, password: checkedHash('CUSTODYFLOW_OPERATORS', username, entry.slice(colon + 1)), permissions: OPERATOR_PERMISSIONS });
  }
  return list;
}

module.exports = {
  uiPort: Number(process.env.PORT) || 1880,
  ...(process.env.HOST ? { uiHost: process.env.HOST } : {}),
  flowFile: 'flows.json',
  flowFilePretty: true,
  credentialSecret: credentialSecret(),
  adminAuth: { type: 'credentials', users: users() },
  diagnostics: { enabled: false },
  telemetry: { enabled: false },
  logging: { console: { level: process.env.LOG_LEVEL || 'info', metrics: false, audit: false } },
  editorTheme: { projects: { enabled: false }, tours: false },
};
