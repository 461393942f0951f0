/**
 * Core Node-RED nodes as the flows.json of the tests and benches write them (function, change,
 * file): one place for their fixed properties. Each returns the node's flows.json object.
 */

/** Where a node stands on its tab: `x`, `y` in editor pixels, and the tab's id `z`. */
export interface Place {
  z: string;
  x: number;
  y: number;
}

/**
 * A function node with one output wired to the node ids `to`.
 * @param func the function's JavaScript body (ends with `return msg;` or the like).
 */
export function functionNode(id: string, name: string, func: string, at: Place, to: string[]): object {
  return { id, z: at.z, type: 'function', name, func, outputs: 1, x: at.x, y: at.y, wires: [to] };
}

/**
 * A change node setting `msg.payload` to the result of the JSONata `expression`, wired to the
 * node ids `to`.
 */
export function jsonataPayloadNode(id: string, expression: string, at: Place, to: string[]): object {
  return { id, z: at.z, type: 'change', rules: [{ t: 'set', p: 'payload', pt: 'msg', to: expression, tot: 'jsonata' }], x: at.x, y: at.y, wires: [to] };
}

/**
 * A file node writing `msg.payload` to `filename` (creating its folder): appended, one line per
 * msg, or, with `replace`, the file replaced by each payload without a newline.
 */
export function fileNode(id: string, filename: string, at: Place, replace = false): object {
  return {
    id,
    z: at.z,
    type: 'file',
    name: '',
    filename,
    filenameType: 'str',
    appendNewline: !replace,
    createDir: true,
    overwriteFile: replace ? 'true' : 'false',
    encoding: 'none',
    x: at.x,
    y: at.y,
    wires: [[]],
  };
}

/** A Catch node for every node of its tab (uncaught or not), wired to the node ids `to`. */
export function catchNode(id: string, at: Place, to: string[]): object {
  return { id, z: at.z, type: 'catch', scope: null, uncaught: false, x: at.x, y: at.y, wires: [to] };
}
