/**
 * What Node-RED 5 added to the runtime: a function node's node.linkcall(), the delay node's burst
 * mode, schema checks of unparsable strings, a file in node completing when its filename fails.
 */
import type { FlowNode } from '../../bench/flows.js';
import { fnProps, type DiffCase, type Kit } from './harness.js';

/** A service on its own tab: link in (named `name`) → payload marked → return-mode link out. */
function service(k: Kit, name: string): FlowNode[] {
  const tab = `${k.tab}-svc`;
  return [
    { id: tab, type: 'tab', label: `${k.name} (service)`, disabled: false, info: '', env: [] },
    { ...k.nodeOn(tab, 'svc-in', 'link in', { links: [] }, 'svc-fn'), name },
    k.nodeOn(tab, 'svc-fn', 'function', fnProps('msg.payload = "answer:" + msg.payload;\nmsg.seen = true;\nreturn msg;', 1), 'svc-ret'),
    k.nodeOn(tab, 'svc-ret', 'link out', { mode: 'return', links: [] }),
  ];
}

/** Node-RED 5's delay defaults, as the editor writes them. */
const burst = (extra: Record<string, unknown>) => ({
  pauseType: 'burst', timeout: '5', timeoutUnits: 'seconds', rate: '2', nbRateUnits: '1', rateUnits: 'minute',
  randomFirst: '1', randomLast: '5', randomUnits: 'seconds', drop: false, allowrate: false, outputs: 2, ...extra,
});

export const nodeRed5Cases: DiffCase[] = [
  {
    name: 'function-linkcall', about: 'await node.linkcall() by name and by id resolves with what the return link out sends; the caller\'s message is cloned',
    build: (k) => [
      ...service(k, 'diff-linkcall-service'),
      k.fn('start', `const byName = await node.linkcall('diff-linkcall-service', msg);
const byId = await node.linkcall('${k.id('svc-in')}', { payload: 'id' }, { timeout: 2000 });
msg.payload = { byName: byName.payload, seen: byName.seen, byId: byId.payload, mine: msg.payload, mineSeen: msg.seen === true, stack: '_linkSource' in byName };
return msg;`, 'out'),
    ],
    requests: [{ msg: { payload: 'q1' } }, { msg: { payload: 'q2' } }],
  },
  {
    name: 'function-linkcall-no-clone', about: 'node.linkcall(target, msg, {clone: false}) hands the called flow the caller\'s own message',
    build: (k) => [
      ...service(k, 'diff-linkcall-noclone'),
      k.fn('start', `const r = await node.linkcall('diff-linkcall-noclone', msg, { clone: false });
msg.payload = { same: r === msg, payload: r.payload };
return msg;`, 'out'),
    ],
    requests: [{ msg: { payload: 'own' } }],
  },
  {
    name: 'function-linkcall-rejections', about: 'node.linkcall() rejects, catchably, on a bad target, a bad message, a missing target and a timeout',
    build: (k) => [
      { ...k.node('sink', 'link in', { links: [] }), name: 'diff-linkcall-sink' },
      k.fn('start', `const out = [];
for (const args of [[5, msg], ['', msg], ['diff-linkcall-sink', 'text'], ['diff-linkcall-nowhere', msg], ['diff-linkcall-sink', msg, { timeout: 50 }]]) {
  try { await node.linkcall(...args); out.push('resolved'); } catch (e) { out.push(e.message); }
}
msg.payload = out;
return msg;`, 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'function-linkcall-uncaught', about: 'an uncaught node.linkcall() rejection fails the message for catch nodes',
    build: (k) => [
      k.fn('start', "await node.linkcall('diff-linkcall-missing', msg);\nreturn msg;", []),
      k.node('catch', 'catch', { scope: [k.id('start')], uncaught: false }, 'out'),
    ],
    requests: [{ msg: { payload: 'lost' } }],
  },
  {
    name: 'delay-burst', about: 'burst mode: the first rate messages of a window pass, the rest take the second output; msg.reset opens the window',
    collect: 'last',
    build: (k) => [
      k.fn('prep', "if (msg.payload === 'reset') msg.reset = true;\nreturn msg;", 'd'),
      k.fan('start', 'prep'),
      k.node('d', 'delay', burst({}), 'm1', 'm2'),
      k.mark('m1', 1, 'out'), k.mark('m2', 2, 'out'),
    ],
    requests: [{ msg: { payload: [1, 2, 3, 4] } }, { msg: { payload: ['reset', 5, 6, 7] } }],
  },
  {
    name: 'file-in-filename-error-completes', about: 'a file in node whose filename expression fails reports the error to catch and completes the message',
    collect: 2,
    build: (k) => [
      k.node('start', 'file in', { filename: '$error("no name")', filenameType: 'jsonata', format: 'utf8', chunk: false, sendError: false, encoding: 'none', allProps: false }, []),
      k.node('catch', 'catch', { scope: [k.id('start')], uncaught: false }, 'caught'),
      k.fn('caught', 'msg.payload = "catch: " + msg.error.message;\nmsg.source = msg.error.source.type;\ndelete msg.error;\nreturn msg;', 'out'),
      k.node('complete', 'complete', { scope: [k.id('start')], uncaught: false }, 'completed'),
      k.fn('completed', 'msg.was = msg.payload;\nmsg.payload = "complete";\nreturn msg;', 'out'),
    ],
    requests: [{ msg: { payload: 'p' } }],
  },
  {
    name: 'json-schema-unparsable-string', about: 'a string that is not JSON, checked against a schema in "always string" mode, fails with the parser\'s message',
    build: (k) => [
      k.node('start', 'json', { property: 'payload', action: 'str', pretty: false }, []),
      k.node('catch', 'catch', { scope: [k.id('start')], uncaught: false }, 'out'),
    ],
    requests: [{ msg: { payload: 'not json', schema: { type: 'object' } } }],
  },
];
