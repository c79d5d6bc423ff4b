import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 (port 0) in front of one server, to put a network fault between an
 * instance and its database:
 * - `pass()`: bytes flow (what was held during a black hole is delivered, as TCP would once the
 *   path is back); a connection whose server side was cut is reset when its client next sends,
 *   as the server would answer it, so an idle one (a LISTEN) stays silently dead;
 * - `blackhole()`: no byte moves either way and every socket stays open: a stalled proxy, pooler
 *   or NAT, where the server's TCP keepalives test only the proxy and nobody sees an error;
 * - `muteAnswers()`: what clients send still reaches the server, but no byte comes back (held as in
 *   a black hole): an asymmetric fault, where the server acts on statements whose answers are lost;
 * - `cut()`: the server side of every connection is closed (the server ends its sessions) while
 *   the client side hears nothing, and new connections hang: a partition;
 * - `reset()`: every connection is reset on both sides, and bytes flow again;
 * - `loseAnswerTo(text)`: the next message a client sends that contains `text` reaches the server,
 *   but the server's answer is dropped and that one connection is reset a moment later: a link
 *   lost between a COMMIT and its answer, so the client cannot know whether it took.
 */

export type FaultMode = 'pass' | 'blackhole' | 'mute' | 'cut';

interface Link {
  client: net.Socket;
  server: net.Socket | undefined;
  /** Bytes held during a black hole, per direction, delivered in order when the path is back. */
  up: Buffer[];
  down: Buffer[];
  /** The server's answers are dropped (`loseAnswerTo`). */
  deaf?: boolean;
}

/** How long after the message whose answer is lost its connection is reset: time enough for the server to act on it. */
const LOST_ANSWER_RESET_MS = 300;

export interface FaultProxy {
  port: number;
  /** A URL like `url` whose host and port are the proxy's. */
  urlFor(url: string): string;
  readonly mode: FaultMode;
  pass(): void;
  blackhole(): void;
  muteAnswers(): void;
  cut(): void;
  reset(): void;
  loseAnswerTo(text: string): void;
  close(): Promise<void>;
}

export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  const links = new Set<Link>();
  let mode: FaultMode = 'pass';
  let loseAnswer: string | undefined;

  const drop = (link: Link) => {
    link.client.destroy();
    link.server?.destroy();
    links.delete(link);
  };

  const flush = (link: Link) => {
    if (!link.server || link.server.destroyed) return;
    for (const b of link.up.splice(0)) link.server.write(b);
    for (const b of link.down.splice(0)) link.client.write(b);
  };

  const connectServer = (link: Link) => {
    const server = net.connect(targetPort, '127.0.0.1');
    link.server = server;
    server.on('data', (b) => {
      if (link.server !== server || link.deaf) return;
      if (mode === 'pass') link.client.write(b);
      else if (mode === 'blackhole' || mode === 'mute') link.down.push(b);
    });
    server.on('error', () => undefined);
    server.on('close', () => {
      // A cut closes the server side on purpose: the client must not hear of it.
      if (link.server === server && mode !== 'cut') drop(link);
    });
    if (mode === 'pass') flush(link);
  };

  const server = net.createServer((client) => {
    const link: Link = { client, server: undefined, up: [], down: [] };
    links.add(link);
    client.on('data', (b) => {
      if (mode === 'pass' && link.server && loseAnswer !== undefined && b.includes(loseAnswer)) {
        loseAnswer = undefined;
        link.deaf = true;
        link.server.write(b);
        setTimeout(() => {
          link.client.resetAndDestroy();
          link.server?.destroy();
          links.delete(link);
        }, LOST_ANSWER_RESET_MS);
      } else if (mode === 'pass' && link.server?.destroyed) {
        link.client.resetAndDestroy();
        links.delete(link);
      } else if ((mode === 'pass' || mode === 'mute') && link.server && !link.server.destroyed) link.server.write(b);
      else if (mode !== 'cut' || !link.server) link.up.push(b);
    });
    client.on('error', () => drop(link));
    client.on('close', () => drop(link));
    if (mode !== 'cut') connectServer(link);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    urlFor: (url) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.href;
    },
    get mode() {
      return mode;
    },
    pass() {
      mode = 'pass';
      for (const link of [...links]) {
        if (link.server === undefined) {
          // Accepted during a partition: connect it now, as a retransmitted SYN would be.
          connectServer(link);
        } else flush(link);
      }
    },
    blackhole() {
      mode = 'blackhole';
    },
    muteAnswers() {
      mode = 'mute';
      // Bytes a black hole held on their way up are sent on now: that direction works.
      for (const link of links) for (const b of link.up.splice(0)) link.server?.write(b);
    },
    cut() {
      mode = 'cut';
      for (const link of links) {
        link.up.length = 0;
        link.down.length = 0;
        link.server?.destroy();
      }
    },
    reset() {
      mode = 'pass';
      for (const link of [...links]) {
        link.client.resetAndDestroy();
        link.server?.resetAndDestroy();
        links.delete(link);
      }
    },
    loseAnswerTo(text) {
      loseAnswer = text;
    },
    close: async () => {
      for (const link of [...links]) drop(link);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
