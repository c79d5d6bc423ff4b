import type { NodeSets } from '../runtime/red-api/red-api-types.js';
import { NODE_RED_COMPAT_VERSION } from '../base/version.js';
import inject from './inject.js';
import debug from './debug.js';
import func from './function/function.js';
import change from './change.js';
import switchNode from './switch.js';
import comment from './comment.js';
import junction from './junction.js';
import catchNode from './catch.js';
import status from './status.js';
import complete from './complete.js';
import link from './link.js';
import httpIn from './http-in.js';
import httpRequest from './http-request.js';
import template from './template.js';
import delay from './delay.js';
import trigger from './trigger.js';
import json from './json.js';
import range from './range.js';
import rbe from './filter.js';
import sort from './sort.js';
import batch from './batch.js';
import split from './split.js';
import join from './join.js';
import csv from './csv/csv.js';
import yaml from './yaml.js';
import xml from './xml.js';
import html from './html.js';
import file from './file.js';
import exec from './exec.js';
import globalConfig from './global-config.js';
import tls from './network/tls/tls.js';
import mqtt from './network/mqtt/index.js';
import websocket from './network/websocket/index.js';
import tcpin from './network/tcp/index.js';
import udp from './network/udp/index.js';
import httpproxy from './network/proxy/proxy.js';
import watch from './watch.js';
import unknown from './unknown.js';

/**
 * The built-in node sets, each written against the same RED API contributed modules receive. The
 * composition root hands them to the runtime. They are listed as Node-RED's core module, with
 * Node-RED's set names and version: the editor picks the core i18n namespace by the module name,
 * and node-red-admin names sets as Node-RED does.
 */
export const CORE_NODES: NodeSets = {
  module: 'node-red',
  version: NODE_RED_COMPAT_VERSION,
  sets: {
    inject,
    debug,
    function: func,
    change,
    switch: switchNode,
    comment,
    junction,
    catch: catchNode,
    status,
    complete,
    link,
    httpin: httpIn,
    httprequest: httpRequest,
    template,
    delay,
    trigger,
    JSON: json,
    range,
    rbe,
    sort,
    batch,
    split: (RED) => {
      split(RED);
      join(RED);
    },
    CSV: csv,
    YAML: yaml,
    XML: xml,
    HTML: html,
    file,
    exec,
    'global-config': globalConfig,
    tls,
    mqtt,
    websocket,
    tcpin,
    udp,
    httpproxy,
    watch,
    unknown,
  },
  // Node-RED 4.1's core files, whose name without the number is the set's: `nodesExcludes` and `nodesIncludes` name them.
  files: Object.fromEntries(
    '05-junction 20-inject 21-debug 24-complete 25-catch 25-status 60-link 90-comment 91-global-config 98-unknown 10-function 10-switch 15-change 16-range 80-template 89-delay 89-trigger 90-exec rbe 05-tls 06-httpproxy 10-mqtt 21-httpin 21-httprequest 22-websocket 31-tcpin 32-udp 70-CSV 70-HTML 70-JSON 70-XML 70-YAML 17-split 18-sort 19-batch 10-file 23-watch'
      .split(' ')
      .map((base) => [base.replace(/^\d+-/, ''), `${base}.js`]),
  ),
};
