/** The parts of RED.httpAdmin's Express-style request and response the core nodes' editor routes use. */
export interface AdminRequest {
  params: Record<string, string>;
  body?: unknown;
}

export interface AdminResponse {
  status(code: number): AdminResponse;
  type(type: string): AdminResponse;
  set(name: string, value: string): AdminResponse;
  json(body: unknown): void;
  send(body: unknown): void;
  sendStatus(code: number): void;
}
