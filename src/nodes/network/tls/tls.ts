/**
 * `tls-config`: TLS material for the network nodes, in Node-RED 5's three forms (`certType`):
 * `files` (the default) — key, certificate and CA as file paths (read once when the node starts) or
 * as PEM text uploaded through the editor into the node's credentials; `pfx` — one PKCS#12 file, by
 * path (`p12`) or uploaded (`p12data`, base64); `env` — PEM text in the environment variables that
 * `certEnv`, `keyEnv` and `caEnv` name. Other nodes ask it to fill in their TLS options (`addTLSOptions`).
 */
import { readFileSync } from 'node:fs';
import type { NodeConfig, NodeInstance, RedApi } from '../../../runtime/red-api/red-api-types.js';

/** What a node that uses TLS gets from `addTLSOptions`: the options of `tls.connect`/`tls.createServer`. */
export interface TlsOptions {
  key?: string | Buffer;
  cert?: string | Buffer;
  ca?: string | Buffer;
  pfx?: Buffer;
  passphrase?: string;
  servername?: string;
  ALPNProtocols?: string[];
  rejectUnauthorized?: boolean;
  [option: string]: unknown;
}

export interface TlsConfigNode extends NodeInstance {
  valid: boolean;
  addTLSOptions(opts: TlsOptions): TlsOptions;
}

type Material = Pick<TlsOptions, 'key' | 'cert' | 'ca' | 'pfx'>;

const MISSING_FILE = 'No certificate/key file provided';
const LOCAL_FILES_DISABLED = 'Certificate files are disabled by tlsConfigDisableLocalFiles: paste the certificate, key and CA into the node instead';

export default function (RED: RedApi) {
  function TlsConfig(this: TlsConfigNode, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const verify = config.verifyservercert === true || config.verifyservercert === 'true';
    const servername = String(config.servername ?? '').trim();
    const alpn = String(config.alpnprotocol ?? '').trim();
    const certType = config.certType === 'pfx' || config.certType === 'env' ? config.certType : 'files';
    const creds = (this.credentials ?? {}) as Record<string, string | undefined>;
    const refuse = (message: string): Material => {
      this.valid = false;
      this.error(message);
      return {};
    };
    /** Node-RED only hides the file fields in the editor; with the setting, Runnel also refuses to read them. */
    const readFiles = (paths: Partial<Record<keyof Material, string>>): Material => {
      if (RED.settings.tlsConfigDisableLocalFiles === true) return refuse(LOCAL_FILES_DISABLED);
      const read: Material = {};
      try {
        for (const [field, file] of Object.entries(paths) as [keyof Material, string][]) if (file) read[field] = readFileSync(file);
      } catch (err) {
        return refuse(String(err));
      }
      return read;
    };

    const fromFiles = (): Material => {
      const paths = { cert: String(config.cert ?? '').trim(), key: String(config.key ?? '').trim(), ca: String(config.ca ?? '').trim() };
      if (paths.cert || paths.key || paths.ca) return !paths.cert !== !paths.key ? refuse(MISSING_FILE) : readFiles(paths);
      if (!(creds.certdata ?? '') !== !(creds.keydata ?? '')) return refuse(MISSING_FILE);
      const uploaded: Material = {};
      if (creds.certdata) uploaded.cert = creds.certdata;
      if (creds.keydata) uploaded.key = creds.keydata;
      if (creds.cadata) uploaded.ca = creds.cadata;
      return uploaded;
    };
    const fromPfx = (): Material => {
      const file = String(config.p12 ?? '').trim();
      if (file) return readFiles({ pfx: file });
      return creds.p12data ? { pfx: Buffer.from(creds.p12data, 'base64') } : {};
    };
    const fromEnv = (): Material => {
      const fromVars: Material = {};
      for (const [field, name] of [['cert', config.certEnv], ['key', config.keyEnv], ['ca', config.caEnv]] as const) {
        if (typeof name !== 'string' || !name) continue;
        const value: unknown = RED.util.evaluateNodeProperty(name, 'env', this, {});
        if (typeof value !== 'string' || value === '') return refuse(`The environment variable ${name} (${field}) is not set`);
        fromVars[field] = Buffer.from(value);
      }
      return fromVars;
    };

    this.valid = true;
    const material = certType === 'pfx' ? fromPfx() : certType === 'env' ? fromEnv() : fromFiles();

    this.addTLSOptions = (opts: TlsOptions): TlsOptions => {
      if (this.valid) {
        Object.assign(opts, material);
        if (creds.passphrase) opts.passphrase = creds.passphrase;
      }
      if (servername) opts.servername = servername;
      if (alpn) opts.ALPNProtocols = [alpn];
      opts.rejectUnauthorized = verify;
      return opts;
    };
  }

  RED.nodes.registerType('tls-config', TlsConfig as never, {
    credentials: {
      certdata: { type: 'text' },
      keydata: { type: 'text' },
      cadata: { type: 'text' },
      p12data: { type: 'text' },
      passphrase: { type: 'password' },
    },
    settings: { tlsConfigDisableLocalFiles: { value: false, exportable: true } },
  });
}
