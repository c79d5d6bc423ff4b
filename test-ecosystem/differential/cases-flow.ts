/** function, link, catch, the HTTP nodes themselves, and environment variables at every level. */
import type { FlowNode } from '../../bench/flows.js';
import { fnProps, type DiffCase, type Kit } from './harness.js';

/** A second tab for a case, for nodes that must live on another flow. */
const otherTab = (k: Kit, env: unknown[] = []): FlowNode => ({ id: `${k.tab}-b`, type: 'tab', label: `${k.name} (b)`, disabled: false, info: '', env });

export const functionCases: DiffCase[] = [
  {
    name: 'function-multi-output', about: 'an array return spreads over outputs, null skips one', collect: 2,
    build: (k) => [
      k.fn('start', "return [msg, null, { payload: 'new', req: msg.req, res: msg.res }];", 'm1', 'm2', 'm3'),
      k.mark('m1', 1, 'out'), k.mark('m2', 2, 'out'), k.mark('m3', 3, 'out'),
    ],
    requests: [{ msg: { payload: 'orig' } }],
  },
  {
    name: 'function-array-of-arrays', about: 'an array in one output position sends several messages from it', collect: 3,
    build: (k) => [
      k.fn('start', `const a = RED.util.cloneMessage(msg); a.payload = 'a';
const b = RED.util.cloneMessage(msg); b.payload = 'b';
msg.payload = 'c';
return [[a, b], msg];`, 'm1', 'm2'),
      k.mark('m1', 1, 'out'), k.mark('m2', 2, 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'function-send-loop', about: 'node.send in a loop, and node.send cloning the message it is given', collect: 4,
    build: (k) => [k.fn('start', `for (let i = 0; i < 2; i++) node.send({ payload: i, req: msg.req, res: msg.res });
msg.payload = 'before';
node.send(msg);
msg.payload = 'after';
node.send(msg);
return null;`, 'out')],
    requests: [{ msg: {} }],
  },
  {
    name: 'function-context', about: 'node, flow and global context in a function across requests',
    build: (k) => [k.fn('start', `const n = (context.get('n') || 0) + 1;
context.set('n', n);
flow.set('f', (flow.get('f') || '') + msg.payload);
global.set('diffG', n * 10);
msg.payload = { n, f: flow.get('f'), g: global.get('diffG'), keys: context.keys().sort(), missing: flow.get('nope') };
return msg;`, 'out')],
    requests: [{ msg: { payload: 'a' } }, { msg: { payload: 'b' } }],
  },
  {
    name: 'function-initialize', about: 'initialize code runs before the first message',
    build: (k) => [{
      ...k.fn('start', "msg.payload = context.get('init') + ':' + msg.payload; return msg;", 'out'),
      initialize: "context.set('init', 'ready');",
    }],
    requests: [{ msg: { payload: 'x' } }],
  },
  {
    name: 'function-api', about: 'node and RED.util members a function relies on',
    build: (k) => [{
      ...k.fn('start', `msg.payload = {
  name: node.name,
  id: node.id,
  outputCount: node.outputCount,
  deep: RED.util.getMessageProperty(msg, 'payload.a.b'),
  nodeName: env.get('NR_NODE_NAME'),
  flowName: env.get('NR_FLOW_NAME'),
  bufferLen: Buffer.from('héllo').length,
  json: JSON.stringify({ x: [1] }),
};
RED.util.setMessageProperty(msg, 'topic.deep', 'set', true);
return msg;`, 'out'),
      name: 'fn-api',
    }],
    requests: [{ msg: { payload: { a: { b: [1, 2] } } } }],
  },
  {
    name: 'function-template-literal', about: 'template literals in function code are not ${ENV}-substituted; env.get reads the environment',
    build: (k) => [k.fn('start', 'msg.payload = `${msg.payload}-${env.get("DIFF_NAME")}-${1 + 1}`;\nreturn msg;', 'out')],
    requests: [{ msg: { payload: 'v' } }],
  },
  {
    name: 'function-throw-catch', about: 'an error thrown by a function reaches the catch node with the message', collect: 1,
    build: (k) => [
      k.fn('start', "msg.payload = 'seen';\nthrow new Error('boom');", 'out'),
      k.node('catch', 'catch', { scope: null, uncaught: false }, 'out'),
    ],
    requests: [{ msg: { payload: 'x' } }],
  },
  {
    name: 'function-node-error-catch', about: 'node.error(text, msg) reaches a scoped catch node; a catch scoped elsewhere stays quiet', collect: 1,
    build: (k) => [
      k.fn('start', "node.error('custom failure', msg);\nreturn null;", 'out'),
      k.node('c1', 'catch', { scope: [k.id('start')], uncaught: false }, 'm1'),
      k.node('c2', 'catch', { scope: [k.id('m1')], uncaught: false }, 'm2'),
      k.mark('m1', 'scoped', 'out'),
      k.mark('m2', 'wrong', 'out'),
    ],
    requests: [{ msg: { payload: 'x' } }],
  },
];

export const linkCases: DiffCase[] = [
  {
    name: 'link-same-tab', about: 'link out to link in on the same tab',
    build: (k) => [
      k.node('start', 'link out', { mode: 'link', links: [k.id('li')] }),
      { ...k.node('li', 'link in', { links: [k.id('start')] }, 'set'), name: 'diff-li' },
      k.change('set', [{ t: 'set', p: 'via', pt: 'msg', to: 'link', tot: 'str' }], 'out'),
    ],
    requests: [{ msg: { payload: 1 } }],
  },
  {
    name: 'link-cross-tab', about: 'link out to another tab and back again by links',
    build: (k) => [
      otherTab(k),
      k.node('start', 'link out', { mode: 'link', links: [k.id('b-in')] }),
      k.nodeOn(`${k.tab}-b`, 'b-in', 'link in', { links: [k.id('start')] }, 'b-set'),
      k.nodeOn(`${k.tab}-b`, 'b-set', 'change', { rules: [{ t: 'set', p: 'hop', pt: 'msg', to: 'tab-b', tot: 'str' }], action: '', property: '', from: '', to: '', reg: false }, 'b-out'),
      k.nodeOn(`${k.tab}-b`, 'b-out', 'link out', { mode: 'link', links: [k.id('back')] }),
      k.node('back', 'link in', { links: [k.id('b-out')] }, 'out'),
    ],
    requests: [{ msg: { payload: 2 } }],
  },
  {
    name: 'link-call-static', about: 'link call to a link in on another tab, answered by a return link out',
    build: (k) => [
      otherTab(k),
      k.node('start', 'link call', { links: [k.id('b-in')], linkType: 'static', timeout: '5' }, 'out'),
      k.nodeOn(`${k.tab}-b`, 'b-in', 'link in', { links: [] }, 'b-fn'),
      k.nodeOn(`${k.tab}-b`, 'b-fn', 'function', fnProps('msg.payload = msg.payload * 2;\nreturn msg;', 1), 'b-ret'),
      k.nodeOn(`${k.tab}-b`, 'b-ret', 'link out', { mode: 'return', links: [] }),
    ],
    requests: [{ msg: { payload: 21 } }],
  },
  {
    name: 'link-call-dynamic', about: 'dynamic link call addressing a link in by name in msg.target',
    build: (k) => [
      k.node('start', 'link call', { links: [], linkType: 'dynamic', timeout: '5' }, 'out'),
      { ...k.node('target', 'link in', { links: [] }, 'set'), name: `diff-target-${k.name}` },
      k.change('set', [{ t: 'set', p: 'payload', pt: 'msg', to: 'payload & "!"', tot: 'jsonata' }], 'ret'),
      k.node('ret', 'link out', { mode: 'return', links: [] }),
    ],
    requests: [{ msg: { payload: 'dyn', target: 'diff-target-link-call-dynamic' } }],
  },
];

export const httpCases: DiffCase[] = [
  {
    name: 'http-get-query', about: 'GET query string (repeated keys become arrays) in msg.payload', http: 'get',
    build: (k) => [k.change('start', [{ t: 'set', p: 'topic', pt: 'msg', to: 'q', tot: 'str' }], 'out')],
    requests: [{ method: 'GET', query: 'a=1&b=x&b=y&c=' }],
  },
  {
    name: 'http-post-bodies', about: 'POST bodies: JSON array, text, form-encoded', http: 'post',
    build: (k) => [k.change('start', [{ t: 'set', p: 'kind', pt: 'msg', to: '$type(payload)', tot: 'jsonata' }], 'out')],
    requests: [
      { method: 'POST', body: '[1,{"a":2}]', contentType: 'application/json' },
      { method: 'POST', body: 'plain text', contentType: 'text/plain' },
      { method: 'POST', body: 'a=1&b=two&b=three', contentType: 'application/x-www-form-urlencoded' },
    ],
  },
  {
    name: 'http-response-status-headers', about: 'msg.statusCode and msg.headers shape the response; a string body is text/html', raw: true, headers: ['x-diff'],
    build: (k) => [k.change('start', [
      { t: 'set', p: 'statusCode', pt: 'msg', to: '201', tot: 'num' },
      { t: 'set', p: 'headers', pt: 'msg', to: '{"x-diff":"yes"}', tot: 'json' },
      { t: 'set', p: 'payload', pt: 'msg', to: 'created', tot: 'str' },
    ], 'out')],
    requests: [{ msg: {} }],
  },
  {
    name: 'http-response-payload-types', about: 'object, number, null and Buffer payloads as response bodies', raw: true,
    build: (k) => [k.fn('start', `const kinds = { obj: { a: [1] }, num: 42, nul: null, buf: Buffer.from('bin'), arr: [1, 'x'] };
msg.payload = kinds[msg.kind];
return msg;`, 'out')],
    requests: ['obj', 'num', 'nul', 'buf', 'arr'].map((kind) => ({ msg: { kind } })),
  },
  {
    name: 'http-request-properties', about: 'the Express request properties flows read: _parsedUrl, originalUrl, baseUrl, route, hostname, protocol, secure, xhr, fresh/stale, ips', http: 'get',
    build: (k) => [k.node('start', 'template', {
      field: 'payload', fieldType: 'msg', format: 'handlebars', syntax: 'mustache', output: 'str',
      template: [
        'pathname={{req._parsedUrl.pathname}}', 'search={{req._parsedUrl.search}}', 'query={{req._parsedUrl.query}}',
        'path={{req._parsedUrl.path}}', 'href={{req._parsedUrl.href}}', 'originalUrl={{req.originalUrl}}',
        'baseUrl={{req.baseUrl}}', 'route={{req.route.path}}', 'hostname={{req.hostname}}', 'protocol={{req.protocol}}',
        'secure={{req.secure}}', 'xhr={{req.xhr}}', 'fresh={{req.fresh}}', 'stale={{req.stale}}', 'ips={{req.ips.length}}', 'reqPath={{req.path}}',
      ].join('\n'),
    }, 'out')],
    requests: [{ method: 'GET', query: 'a=1&b=two' }, { method: 'GET' }],
  },
  {
    name: 'http-not-found', about: 'a path under httpNodeRoot no flow serves (here: another method) gets Express\'s 404 page', http: 'get',
    headers: ['content-security-policy', 'x-content-type-options'],
    build: (k) => [k.change('start', [], 'out')],
    requests: [{ method: 'POST', body: 'x', contentType: 'text/plain' }, { method: 'POST', query: 'q=<b>' }],
  },
];

const envVar = (name: string, value: string, type = 'str') => ({ name, value, type });

const ENV_PROBE = `msg.payload = {};
for (const name of ['DIFF_NAME', 'TABV', 'TABN', 'TABJ', 'TABE', 'GRP', 'DIFF_GLOBAL', 'NR_NODE_NAME', 'NR_GROUP_NAME', 'NR_FLOW_NAME', 'NR_SUBFLOW_NAME', 'NOT_SET']) {
  msg.payload[name] = env.get(name);
}
return msg;`;

export const envCases: DiffCase[] = [
  {
    name: 'env-tab', about: 'tab env of every type, read by env.get, a change rule and a ${VAR} whole value',
    tab: { env: [envVar('TABV', 'tab-value'), envVar('TABN', '5', 'num'), envVar('TABJ', '$string(2+3) & "j"', 'jsonata'), envVar('TABE', 'DIFF_NAME', 'env')] },
    build: (k) => [
      k.change('start', [
        { t: 'set', p: 'fromRule', pt: 'msg', to: 'TABN', tot: 'env' },
        { t: 'set', p: 'whole', pt: 'msg', to: '${TABV}', tot: 'str' },
        { t: 'set', p: 'partial', pt: 'msg', to: 'x-${TABV}', tot: 'str' },
        { t: 'set', p: 'procWhole', pt: 'msg', to: '${DIFF_NAME}', tot: 'str' },
      ], 'probe'),
      { ...k.fn('probe', ENV_PROBE, 'out'), name: 'probe-node' },
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'env-group', about: 'group env seen by nodes inside the group, NR_GROUP_NAME',
    build: (k) => {
      const group = `${k.tab}-g`;
      return [
        { id: group, type: 'group', z: k.tab, name: 'the-group', style: { label: true }, nodes: [k.id('start'), k.id('probe')], env: [envVar('GRP', 'grp-value')], x: 10, y: 10, w: 400, h: 200 },
        { ...k.change('start', [{ t: 'set', p: 'fromRule', pt: 'msg', to: 'GRP', tot: 'env' }], 'probe'), g: group },
        { ...k.fn('probe', ENV_PROBE, 'out'), g: group, name: 'in-group' },
      ];
    },
    requests: [{ msg: {} }],
  },
  {
    name: 'env-global-config', about: 'the global-config node\'s env is visible on every tab',
    build: (k) => [
      { id: 'diff-global-config', type: 'global-config', env: [envVar('DIFF_GLOBAL', 'global-value')], modules: {} },
      k.change('start', [{ t: 'set', p: 'fromRule', pt: 'msg', to: 'DIFF_GLOBAL', tot: 'env' }], 'probe'),
      { ...k.fn('probe', ENV_PROBE, 'out'), name: 'global-probe' },
    ],
    requests: [{ msg: {} }],
  },
];

/** A subflow definition: in → `inner` nodes → out, with its own env. */
function subflow(k: Kit, env: unknown[], inner: (sf: string) => FlowNode[], first: string, last: string): FlowNode[] {
  const sf = `${k.tab}-sf`;
  return [
    { id: sf, type: 'subflow', name: `sf-${k.name}`, info: '', category: '', in: [{ x: 40, y: 40, wires: [{ id: k.id(first) }] }], out: [{ x: 500, y: 40, wires: [{ id: k.id(last), port: 0 }] }], env, meta: {}, color: '#DDAA99' },
    ...inner(sf),
  ];
}

export const subflowCases: DiffCase[] = [
  {
    name: 'subflow-env', about: 'subflow env defaults, instance overrides, NR_SUBFLOW_NAME, nested reading of the parent tab env', collect: 2,
    tab: { env: [envVar('TABV', 'outer-tab')] },
    build: (k) => {
      const defs = subflow(k, [envVar('TABN', '1', 'num'), envVar('GRP', 'default'), envVar('DIFF_GLOBAL', 'sf-default')],
        (sf) => [k.nodeOn(sf, 'probe', 'function', { ...fnProps(ENV_PROBE, 1), name: 'sf-probe' })], 'probe', 'probe');
      return [
        ...defs,
        k.fn('start', 'return [msg, RED.util.cloneMessage(msg)];', 'i1', 'i2'),
        { ...k.node('i1', `subflow:${k.tab}-sf`, { env: [envVar('GRP', 'override'), envVar('TABN', '7', 'num')] }, 'out'), name: 'inst-1' },
        { ...k.node('i2', `subflow:${k.tab}-sf`, { env: [] }, 'out'), name: 'inst-2' },
      ];
    },
    requests: [{ msg: {} }],
  },
  {
    name: 'env-empty-names', about: 'NR_NODE_NAME and NR_SUBFLOW_NAME of nodes saved with name ""',
    build: (k) => [
      ...subflow(k, [], (sf) => [k.nodeOn(sf, 'probe', 'function', fnProps(ENV_PROBE, 1))], 'probe', 'probe'),
      k.node('start', `subflow:${k.tab}-sf`, { env: [] }, 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'subflow-typed-env', about: 'subflow env of type jsonata, env and bool; a change inside reads it; ${VAR} inside a subflow',
    build: (k) => {
      const defs = subflow(k, [envVar('SJ', '1 + 2', 'jsonata'), envVar('SE', 'DIFF_NAME', 'env'), envVar('SB', 'true', 'bool'), envVar('SS', 'inner')],
        (sf) => [
          k.nodeOn(sf, 'c', 'change', {
            rules: [
              { t: 'set', p: 'payload.sj', pt: 'msg', to: 'SJ', tot: 'env' },
              { t: 'set', p: 'payload.se', pt: 'msg', to: 'SE', tot: 'env' },
              { t: 'set', p: 'payload.sb', pt: 'msg', to: 'SB', tot: 'env' },
              { t: 'set', p: 'payload.whole', pt: 'msg', to: '${SS}', tot: 'str' },
              { t: 'set', p: 'payload.jsonataEnv', pt: 'msg', to: '$env("SS")', tot: 'jsonata' },
            ], action: '', property: '', from: '', to: '', reg: false,
          }),
        ], 'c', 'c');
      return [...defs, k.node('start', `subflow:${k.tab}-sf`, { env: [envVar('SS', 'overridden')] }, 'out')];
    },
    requests: [{ msg: { payload: {} } }],
  },
];
