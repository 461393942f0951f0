/**
 * The example flow files as the tests read them: `examples/*.json` of the repository (docs/examples.md),
 * each a list of Node-RED nodes as flows.json stores them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { root } from './red-process';

/** The repository's examples folder. */
export const EXAMPLES_DIR = path.join(root, 'examples');

/** A node of an example flow file: the fields the tests read by name, and any other by index. */
export interface FlowNode {
  id: string;
  type: string;
  z?: string;
  name?: string;
  label?: string;
  x?: number;
  y?: number;
  connection?: string;
  operation?: string;
  clientId?: string;
  wires?: string[][];
  [field: string]: unknown;
}

/** One example file: its name (e.g. `06 withdrawal with an approver.json`) and its nodes. */
export interface ExampleFile {
  file: string;
  nodes: FlowNode[];
}

/** Every example file of {@link EXAMPLES_DIR}, by name in order, read now. @throws on a file that is not JSON. */
export function readExamples(): ExampleFile[] {
  return fs
    .readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, nodes: JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8')) as FlowNode[] }));
}
