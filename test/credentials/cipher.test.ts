import assert from 'node:assert/strict';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { CredentialCipher, decryptNodeRedBlob, encryptNodeRedBlob } from '../../src/credentials/cipher.js';
import type { CredentialMap } from '../../src/storage/contract.js';

const MAP: CredentialMap = { n1: { user: 'alice', password: 's3cret-pass' }, n2: { token: 'tok-xyz' } };

/** Node-RED's own recipe (credentials.js), written independently of the code under test. */
function nodeRedEncrypt(map: CredentialMap, secret: string): string {
  const key = createHash('sha256').update(secret).digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-ctr', key, iv);
  return iv.toString('hex') + cipher.update(JSON.stringify(map), 'utf8', 'base64') + cipher.final('base64');
}

const flip = (b64: string) => {
  const buf = Buffer.from(b64, 'base64');
  buf[0] = buf[0]! ^ 1;
  return buf.toString('base64');
};

describe('credential cipher (AES-256-GCM, scrypt)', { timeout: 30_000 }, () => {
  it('round-trips and writes the documented shape with no plaintext in it', async () => {
    const cipher = new CredentialCipher('my secret');
    const doc = await cipher.encrypt(MAP);
    assert.deepEqual(Object.keys(doc).sort(), ['N', 'alg', 'data', 'iv', 'kdf', 'p', 'r', 'salt', 'tag']);
    assert.equal(doc.alg, 'aes-256-gcm');
    assert.equal(doc.kdf, 'scrypt');
    assert.equal(Buffer.from(doc.iv as string, 'base64').length, 12);
    assert.equal(Buffer.from(doc.tag as string, 'base64').length, 16);
    const text = JSON.stringify(doc);
    for (const secret of ['alice', 's3cret-pass', 'tok-xyz']) assert.ok(!text.includes(secret));
    assert.deepEqual(await new CredentialCipher('my secret').decrypt(doc), { map: MAP, current: true });
  });

  it('uses a fresh IV for every save and keeps the salt (one scrypt derivation per process)', async () => {
    const cipher = new CredentialCipher('k');
    const a = await cipher.encrypt(MAP);
    const b = await cipher.encrypt(MAP);
    assert.notEqual(a.iv, b.iv);
    assert.notEqual(a.data, b.data);
    assert.equal(a.salt, b.salt);
  });

  it('detects tampering with the data, the tag, the IV or the authenticated header', async () => {
    const cipher = new CredentialCipher('k');
    const doc = await cipher.encrypt(MAP);
    for (const field of ['data', 'tag', 'iv', 'salt']) {
      await assert.rejects(cipher.decrypt({ ...doc, [field]: flip(doc[field] as string) }), /do not decrypt with the configured key/, field);
    }
    await assert.rejects(cipher.decrypt({ ...doc, N: 2 ** 14 }), /do not decrypt/);
    const shortTag = Buffer.from(doc.tag as string, 'base64').subarray(0, 4).toString('base64');
    await assert.rejects(cipher.decrypt({ ...doc, tag: shortTag }), /do not decrypt/);
  });

  it('rejects a wrong key, and accepts a legacy key flagged as not current', async () => {
    const doc = await new CredentialCipher('old').encrypt(MAP);
    await assert.rejects(new CredentialCipher('new').decrypt(doc), /do not decrypt with the configured key/);
    assert.deepEqual(await new CredentialCipher('new', ['old']).decrypt(doc), { map: MAP, current: false });
  });

  it('refuses absurd scrypt parameters instead of burning memory', async () => {
    const doc = await new CredentialCipher('k').encrypt(MAP);
    await assert.rejects(new CredentialCipher('k').decrypt({ ...doc, N: 2 ** 30 }), /unknown format/);
  });

  it('stores {plain} when encryption is disabled and reads it back as current', async () => {
    const cipher = new CredentialCipher(undefined);
    const doc = await cipher.encrypt(MAP);
    assert.deepEqual(doc, { plain: MAP });
    assert.deepEqual(await cipher.decrypt(doc), { map: MAP, current: true });
    assert.deepEqual(await new CredentialCipher('k').decrypt(doc), { map: MAP, current: false });
  });

  it('reads Node-RED documents: the $ blob with the key or a legacy key, and the plain map', async () => {
    const blob = nodeRedEncrypt(MAP, 'nr-key');
    assert.deepEqual(await new CredentialCipher('nr-key').decrypt({ $: blob }), { map: MAP, current: false });
    assert.deepEqual(await new CredentialCipher('user', ['nr-key']).decrypt({ $: blob }), { map: MAP, current: false });
    await assert.rejects(new CredentialCipher('other').decrypt({ $: blob }), /do not decrypt/);
    await assert.rejects(new CredentialCipher(undefined).decrypt({ $: blob }), /do not decrypt/);
    assert.deepEqual(await new CredentialCipher(undefined).decrypt(MAP), { map: MAP, current: false });
    await assert.rejects(new CredentialCipher('k').decrypt({ n1: 'not an object' }), /unknown format/);
  });
});

describe('Node-RED blob helpers', { timeout: 30_000 }, () => {
  it('decrypt what Node-RED encrypts and encrypt what Node-RED decrypts', () => {
    assert.deepEqual(decryptNodeRedBlob(nodeRedEncrypt(MAP, 's'), 's'), MAP);
    const blob = encryptNodeRedBlob(MAP, 's');
    assert.match(blob, /^[0-9a-f]{32}[A-Za-z0-9+/=]+$/);
    assert.deepEqual(decryptNodeRedBlob(blob, 's'), MAP);
  });

  it('throw on a wrong key, a garbage blob or a plaintext that is not a credential map', () => {
    const blob = encryptNodeRedBlob(MAP, 's');
    assert.throws(() => decryptNodeRedBlob(blob, 'not-s'), /do not decrypt with this key/);
    assert.throws(() => decryptNodeRedBlob('garbage', 's'), /not a Node-RED credentials blob/);
    assert.throws(() => decryptNodeRedBlob(nodeRedEncrypt(['x'] as unknown as CredentialMap, 's'), 's'), /do not decrypt/);
  });
});
