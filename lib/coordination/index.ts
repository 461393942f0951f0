/** Coordination of several Node-RED instances through Redis (docs/scale-out.md): see coordinator.ts. */
export * from './coordinator';
export * from './shared-journal';
export * from './velocity-windows';
