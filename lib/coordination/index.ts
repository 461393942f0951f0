/** Coordination of several Node-RED instances through Redis (issue 12): see coordinator.ts. */
export * from './coordinator';
export * from './shared-journal';
export * from './velocity-windows';
