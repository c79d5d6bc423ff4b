import { WebSocket } from 'ws';
import { eventually } from './server.js';

export interface Entry {
  topic: string;
  data: any;
}

/** A /comms client (as the editor speaks it) that records every frame. */
export class Editor {
  readonly frames: unknown[] = [];
  readonly ws: WebSocket;
  closed = false;
  private readonly opened: Promise<void>;

  constructor(url: string) {
    this.ws = new WebSocket(url.replace(/^http/, 'ws') + 'comms');
    this.ws.on('message', (data) => this.frames.push(JSON.parse(String(data))));
    this.ws.on('close', () => (this.closed = true));
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
  }

  async send(msg: unknown): Promise<void> {
    await this.opened;
    this.ws.send(JSON.stringify(msg));
  }

  /** Every `{topic, data}` received so far, batches flattened. */
  get entries(): Entry[] {
    return this.frames.filter(Array.isArray).flat() as Entry[];
  }

  on(topic: string): Entry[] {
    return this.entries.filter((e) => e.topic === topic);
  }

  async waitFor(topic: string, count = 1): Promise<Entry[]> {
    await eventually(() => this.on(topic).length >= count, 30_000);
    return this.on(topic);
  }

  close(): void {
    this.ws.terminate();
  }
}
