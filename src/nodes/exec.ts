/**
 * The exec node runs operating-system commands by design: in exec mode the command line
 * (command, then the chosen message property, then `append`) goes to a shell, exactly as in
 * Node-RED, so a flow that feeds untrusted input into it runs whatever that input says. The
 * `execAllowed: false` setting turns the node off for installations that must not run commands.
 *
 * Outputs: stdout, stderr, and the return code. Exec mode sends once when the command ends
 * (`msg.rc` on every output); spawn mode streams stdout and stderr chunks as they arrive.
 * Children run in their own process group so a timeout, `msg.kill` or closing the node stops
 * whatever the command started too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

interface Running {
  child: ChildProcess;
  timer?: ReturnType<typeof setTimeout>;
}

const text = (data: Buffer): string | Buffer => (isUtf8(data) ? data.toString() : data);
const WINDOWS = process.platform === 'win32';
const SHELL = process.platform === 'linux' && existsSync('/bin/bash') ? '/bin/bash' : undefined;

/** Splits a spawn command line on spaces, keeping "quoted strings" together without their quotes. */
function splitArgs(line: string): string[] {
  return (line.match(/(?:[^\s"]+|"[^"]*")+/g) ?? []).map((a) => (/^".*"$/.test(a) ? a.slice(1, -1) : a));
}

export default function (RED: RedApi) {
  class ExecNode extends RED.nodes.Node {
    private readonly cmd: string;
    private readonly addpay: string;
    private readonly append: string;
    private readonly useSpawn: boolean;
    private readonly timeout: number;
    private readonly oldrc: boolean;
    private readonly winHide: boolean;
    private readonly allowed: boolean;
    private readonly active = new Map<number, Running>();

    constructor(config: NodeConfig) {
      super(config);
      this.cmd = String(config.command || '').trim();
      const addpay = config.addpay === undefined ? true : config.addpay;
      this.addpay = addpay === true ? 'payload' : typeof addpay === 'string' ? addpay : '';
      this.append = String(config.append || '').trim();
      this.useSpawn = config.useSpawn === true || config.useSpawn === 'true';
      this.timeout = Number(config.timer || 0) * 1000;
      this.oldrc = String(config.oldrc || false) === 'true';
      this.winHide = config.winHide === true;
      this.allowed = RED.settings.execAllowed !== false;
      if (!this.allowed) this.status({ fill: 'red', shape: 'ring', text: 'disabled' });
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
        if (!this.allowed) return done(new Error('exec node disabled: the execAllowed setting is false'));
        if (Object.prototype.hasOwnProperty.call(msg, 'kill')) {
          this.kill(msg);
          return done();
        }
        const line = this.commandLine(msg);
        if (this.useSpawn) this.runSpawn(line, msg, send, done);
        else this.runExec(line, msg, send, done);
      });
      this.on('close', () => {
        for (const pid of [...this.active.keys()]) this.stop(pid, 'SIGTERM');
        this.status({});
      });
    }

    private commandLine(msg: Msg): string {
      let line = this.cmd;
      if (this.addpay) {
        let value: unknown;
        try {
          value = RED.util.getMessageProperty(msg, this.addpay);
        } catch {
          value = undefined;
        }
        if (value !== undefined) line += ` ${value as string}`;
      }
      if (this.append) line += ` ${this.append}`;
      return line;
    }

    private kill(msg: Msg): void {
      const signal = typeof msg.kill === 'string' && msg.kill.toUpperCase().startsWith('SIG') ? msg.kill.toUpperCase() : 'SIGTERM';
      const pid = msg.pid !== undefined ? Number(msg.pid) : this.active.size === 1 ? [...this.active.keys()][0] : undefined;
      if (pid === undefined || !this.active.has(pid)) return;
      this.stop(pid, signal as NodeJS.Signals);
      this.status({ fill: 'red', shape: 'dot', text: 'killed' });
    }

    /** Signals the child's whole process group, so a shell's own children go too. */
    private stop(pid: number, signal: NodeJS.Signals): void {
      const running = this.active.get(pid);
      if (!running) return;
      clearTimeout(running.timer);
      try {
        if (WINDOWS) running.child.kill(signal);
        else process.kill(-pid, signal);
      } catch {
        // Already gone.
      }
    }

    private track(child: ChildProcess): void {
      if (child.pid === undefined) return;
      const running: Running = { child };
      const pid = child.pid;
      if (this.timeout > 0) running.timer = setTimeout(() => this.stop(pid, 'SIGTERM'), this.timeout);
      this.active.set(pid, running);
      this.status({ fill: 'blue', shape: 'dot', text: `pid:${pid}` });
    }

    private untrack(child: ChildProcess): void {
      if (child.pid === undefined) return;
      clearTimeout(this.active.get(child.pid)?.timer);
      this.active.delete(child.pid);
    }

    private runExec(line: string, msg: Msg, send: SendFn, done: DoneFn): void {
      const maxBuffer = Number(RED.settings.execMaxBufferSize) || 10_000_000;
      // spawn with a shell rather than child_process.exec, which cannot start a process group.
      const child = spawn(line, [], { shell: SHELL ?? true, windowsHide: this.winHide, detached: !WINDOWS });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let size = 0;
      const collect = (list: Buffer[]) => (data: Buffer) => {
        size += data.length;
        list.push(data);
        if (size > maxBuffer && child.pid !== undefined) this.stop(child.pid, 'SIGTERM');
      };
      child.stdout.on('data', collect(out));
      child.stderr.on('data', collect(err));
      child.on('error', () => {});
      child.on('close', (code, signal) => {
        this.untrack(child);
        this.finishExec(line, msg, Buffer.concat(out), Buffer.concat(err), code, signal, send);
        done();
      });
      this.track(child);
    }

    /** Node-RED's exec-mode outputs, with child_process.exec's error message and fields. */
    private finishExec(line: string, msg: Msg, stdout: Buffer, stderr: Buffer, code: number | null, signal: NodeJS.Signals | null, send: SendFn): void {
      delete msg.payload;
      let errMsg: Msg | null = null;
      if (stderr.length) {
        errMsg = RED.util.cloneMessage(msg);
        errMsg.payload = text(stderr);
      }
      msg.payload = text(stdout);
      let rcMsg: Msg | null = null;
      if (code !== 0) {
        const rc: Record<string, unknown> = { code, message: `Command failed: ${line}\n${stderr.toString()}` };
        if (signal) rc.signal = signal;
        rcMsg = RED.util.cloneMessage(msg);
        rcMsg.payload = rc;
        this.status({ fill: 'red', shape: 'dot', text: code === null ? 'killed' : `error:${code}` });
      } else {
        this.status({});
        if (!this.oldrc) {
          rcMsg = RED.util.cloneMessage(msg);
          rcMsg.payload = { code: 0 };
        }
      }
      if (rcMsg) {
        msg.rc = rcMsg.payload;
        if (errMsg) errMsg.rc = rcMsg.payload;
      }
      send([msg, errMsg, rcMsg]);
    }

    private runSpawn(line: string, msg: Msg, send: SendFn, done: DoneFn): void {
      const [cmd, ...args] = splitArgs(line);
      if (cmd === undefined) return done(new Error('No command specified'));
      const child = spawn(cmd, args, { windowsHide: this.winHide, detached: !WINDOWS });
      this.track(child);
      const forward = (output: 0 | 1) => (data: Buffer) => {
        const m: Msg = RED.util.cloneMessage(msg);
        m.payload = text(data);
        send(output === 0 ? [m, null, null] : [null, m, null]);
      };
      child.stdout.on('data', forward(0));
      child.stderr.on('data', forward(1));
      // Node-RED reports a failed start (an unknown command) only by the return code that follows.
      child.on('error', () => {});
      child.on('close', (code, signal) => {
        this.untrack(child);
        const m: Msg = RED.util.cloneMessage(msg);
        if (this.oldrc) m.payload = code;
        else {
          m.payload = { code };
          if (signal) m.payload.signal = signal;
        }
        // Node-RED's status for a clean exit is "rc:0" in yellow, like any other code.
        if (code === null) this.status({ fill: 'red', shape: 'dot', text: 'killed' });
        else this.status({ fill: code < 0 ? 'red' : 'yellow', shape: 'dot', text: `rc:${code}` });
        send([null, null, m]);
        done();
      });
    }
  }

  RED.nodes.registerType('exec', ExecNode);
}
