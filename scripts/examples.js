// Reads the example flows (examples/*.json) and merges them into one flow list, keeping one
// copy of a node that several files share (the config node of the built-in simulator).
// Used by `npm start` and by the end-to-end test.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/**
 * @param {string} dir the examples folder
 * @returns {object[]} every node of every example, each id once, in file-name order
 * @throws {Error} when a file is not a JSON array, or two files give one id to different nodes
 */
function mergeExamples(dir) {
  const byId = new Map();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const nodes = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    if (!Array.isArray(nodes)) throw new Error(`${file}: not a flow (expected a JSON array)`);
    for (const n of nodes) {
      const seen = byId.get(n.id);
      if (seen && JSON.stringify(seen) !== JSON.stringify(n)) throw new Error(`${file}: id ${n.id} is used by two different nodes`);
      byId.set(n.id, n);
    }
  }
  return [...byId.values()];
}

module.exports = { mergeExamples };
