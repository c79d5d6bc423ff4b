/**
 * The floor for the deploy scenarios: the least any server must do to take a deploy of the bench's
 * config durably and serve it, written with node:http alone. POST /flows reads the body, parses it,
 * serialises the flows (the stored document), hashes them (the rev), writes them to a file with
 * fsync and an atomic rename, then routes the config's `http in` probes to the string their
 * function answers. No node objects, no diff, no history, no credentials: a runtime cannot take the
 * same deploy in less. POST /auth/token answers a token and GET / answers 200, so the harness drives
 * it like the systems. Usage: node bare-deploy.js PORT
 */
import http from 'node:http';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

interface FlowNode {
  id: string;
  type: string;
  url?: string;
  func?: string;
  wires?: string[][] | string[];
}

const port = Number(process.argv[2]);
const dir = mkdtempSync(path.join(os.tmpdir(), 'runnel-bare-deploy-'));
const file = path.join(dir, 'flows.json');
let routes = new Map<string, string>();
const ANSWER = /^msg\.payload = ("(?:[^"\\]|\\.)*");/;

async function writeDurably(text: string): Promise<void> {
  const tmp = `${file}.tmp`;
  const handle = await open(tmp, 'w');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
  const folder = await open(dir, 'r');
  await folder.sync();
  await folder.close();
}

/** http-in url -> what the function wired to it answers (the bench's probe shape). */
function routesOf(flows: FlowNode[]): Map<string, string> {
  const byId = new Map(flows.map((n) => [n.id, n]));
  const out = new Map<string, string>();
  for (const node of flows) {
    if (node.type !== 'http in' || typeof node.url !== 'string') continue;
    const first = (node.wires as string[][] | undefined)?.[0]?.[0];
    const answer = ANSWER.exec(byId.get(first ?? '')?.func ?? '');
    if (answer) out.set(node.url.replace(/^\/?/, '/'), JSON.parse(answer[1]) as string);
  }
  return out;
}

async function deploy(body: string): Promise<string> {
  const parsed = JSON.parse(body) as { flows: FlowNode[] } | FlowNode[];
  const flows = Array.isArray(parsed) ? parsed : parsed.flows;
  const json = JSON.stringify(flows);
  const rev = createHash('sha256').update(json).digest('hex');
  await writeDurably(json);
  routes = routesOf(flows);
  return JSON.stringify({ rev });
}

http
  .createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '/';
      const reply = (status: number, text: string) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(text);
      };
      if (req.method === 'POST' && url === '/auth/token') return reply(200, JSON.stringify({ access_token: 'bare', token_type: 'Bearer' }));
      if (req.method === 'POST' && url === '/flows') {
        deploy(Buffer.concat(chunks).toString('utf8')).then(
          (text) => reply(200, text),
          (e: Error) => reply(400, JSON.stringify({ code: 'invalid_flows', message: e.message })),
        );
        return;
      }
      const answer = routes.get(url);
      if (answer !== undefined) {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end(answer);
        return;
      }
      reply(url === '/' || url === '/auth/login' ? 200 : 404, '{}');
    });
  })
  .listen(port, '127.0.0.1');

process.on('SIGTERM', () => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
