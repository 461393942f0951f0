/** The test helper ships no types; the tests use load, unload, getNode, startServer, stopServer, init, settings. */
declare module 'node-red-node-test-helper';
