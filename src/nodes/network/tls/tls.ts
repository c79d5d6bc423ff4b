/**
 * `tls-config`: key, certificate and CA for the network nodes, either as file paths (read once when
 * the node starts) or as PEM text uploaded through the editor into the node's credentials, exactly
 * as Node-RED keeps them. Other nodes ask it to fill in their TLS options (`addTLSOptions`).
 */
import { readFileSync } from 'node:fs';
import type { NodeConfig, NodeInstance, RedApi } from '../../../runtime/red-api/red-api-types.js';

/** What a node that uses TLS gets from `addTLSOptions`: the options of `tls.connect`/`tls.createServer`. */
export interface TlsOptions {
  key?: string | Buffer;
  cert?: string | Buffer;
  ca?: string | Buffer;
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

const MISSING_FILE = 'No certificate/key file provided';
const LOCAL_FILES_DISABLED = 'Certificate files are disabled by tlsConfigDisableLocalFiles: paste the certificate, key and CA into the node instead';

export default function (RED: RedApi) {
  function TlsConfig(this: TlsConfigNode, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const verify = config.verifyservercert === true || config.verifyservercert === 'true';
    const servername = String(config.servername ?? '').trim();
    const alpn = String(config.alpnprotocol ?? '').trim();
    const material: Pick<TlsOptions, 'key' | 'cert' | 'ca'> = {};
    this.valid = true;

    const paths = { cert: String(config.cert ?? '').trim(), key: String(config.key ?? '').trim(), ca: String(config.ca ?? '').trim() };
    const creds = (this.credentials ?? {}) as Record<string, string | undefined>;
    if (paths.cert || paths.key || paths.ca) {
      // Node-RED only hides the file fields in the editor; a flow could still name any file on
      // the server. With the setting, Runnel also refuses to read them.
      if (RED.settings.tlsConfigDisableLocalFiles === true) {
        this.valid = false;
        this.error(LOCAL_FILES_DISABLED);
      } else if (!paths.cert !== !paths.key) {
        this.valid = false;
        this.error(MISSING_FILE);
      } else {
        try {
          for (const field of ['cert', 'key', 'ca'] as const) if (paths[field]) material[field] = readFileSync(paths[field]);
        } catch (err) {
          this.valid = false;
          this.error(String(err));
        }
      }
    } else if (!(creds.certdata ?? '') !== !(creds.keydata ?? '')) {
      this.valid = false;
      this.error(MISSING_FILE);
    } else {
      if (creds.certdata) material.cert = creds.certdata;
      if (creds.keydata) material.key = creds.keydata;
      if (creds.cadata) material.ca = creds.cadata;
    }

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
      passphrase: { type: 'password' },
    },
    settings: { tlsConfigDisableLocalFiles: { value: false, exportable: true } },
  });
}
