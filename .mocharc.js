/**
 * Mocha's settings. `npm test` runs every suite (dist/test/**\/*.test.js); a command that names
 * test files (`npx mocha dist/test/nodes/track.test.js`) runs just those: mocha adds the files named
 * on the command line to `spec`, so `spec` is left empty when any is named.
 */
const named = process.argv.slice(2).some((a) => /^dist[\\/].*\.(test|run)\.js$/.test(a));
module.exports = {
  spec: named ? [] : ['dist/test/**/*.test.js'],
  timeout: 30000,
  require: ['dist/test/helpers/isolated-dirs.js', 'dist/test/helpers/response-check.js'],
};
