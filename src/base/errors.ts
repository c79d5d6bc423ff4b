/**
 * The error catalogue: every code a client can see, with its one HTTP status and what it means.
 * Throw sites name a code from here and only write the message, so a code never means two things and
 * the README's table can be checked against this list (test/base/errors.test.ts does).
 */
export const ERRORS = {
  invalid_request: [400, 'the request is malformed or a field has the wrong type'],
  invalid_json: [400, 'the body is not valid JSON'],
  invalid_multipart: [400, 'a multipart/form-data body is malformed'],
  unexpected_field: [400, 'a multipart upload has a file field of another name'],
  invalid_flows: [400, 'the flow configuration is not a valid Node-RED configuration'],
  invalid_api_version: [400, 'the API version header is neither v1 nor v2'],
  invalid_deployment_type: [400, 'the deployment type header is not full, nodes, flows or reload'],
  invalid_run_state: [400, 'POST /flows/state takes {state: "start" or "stop"}'],
  invalid_credentials: [400, 'a credentials value has the wrong shape'],
  credentials_load_failed: [400, 'a Node-RED credentials blob ($) sent with a deploy does not decrypt with the key'],
  invalid_module: [400, "a module's package.json node-red section is malformed"],
  invalid_module_name: [400, 'a module name is not a valid npm package name'],
  invalid_module_url: [400, "a module's url (a catalogue's pkg_url) is not an http(s) URL, or carries a user name or password"],
  node_red_version_unsupported: [400, 'the module needs a Node-RED version that Runnel does not present'],
  module_already_loaded: [400, 'the module is already installed at that version'],
  module_not_removable: [400, 'the module was not installed through the admin API'],
  type_already_registered: [400, 'a node type of the module is registered by another module'],
  type_in_use: [400, 'a node type of the module is used by the deployed flows'],
  not_node_module: [400, 'the package has no node-red section (or no package.json)'],
  tarball_not_gzip: [400, 'an uploaded module is not a gzip-compressed tarball'],
  tarball_invalid: [400, 'an uploaded module is not a readable tar archive'],
  tarball_too_large: [400, 'an uploaded module expands to more than the allowed size'],
  tarball_absolute_path: [400, 'an entry of an uploaded module has an absolute path'],
  tarball_path_traversal: [400, 'an entry of an uploaded module escapes the package directory'],
  tarball_link_outside: [400, 'a link in an uploaded module points outside the package'],
  tarball_device_entry: [400, 'an uploaded module contains a device file or FIFO'],
  tarball_unsupported_entry: [400, 'an uploaded module contains an entry of an unsupported type'],
  install_failed: [400, 'npm could not install the module'],
  uninstall_failed: [400, 'npm could not remove the module'],
  invalid_project_name: [400, 'a project name is not 1 to 64 letters, digits, "-" or "_"'],
  project_exists: [400, 'a project of that name already exists (Node-RED\'s code)'],
  project_not_found: [400, 'there is no project of that name (Node-RED\'s code and status)'],
  project_not_active: [400, 'the operation works on the active project only: open the project first'],
  cannot_delete_active_project: [400, 'the active project cannot be deleted (Node-RED\'s code)'],
  missing_flow_file: [400, "the project's package.json names no flow file (Node-RED's code)"],
  missing_current_credential_key: [400, "changing a project's credential secret needs the current one, or a reset (Node-RED's code)"],
  git_invalid_argument: [400, 'a branch, commit, remote name or URL is not one git may be given (Node-RED\'s code)'],
  git_error: [400, 'git refused the operation; the message is git\'s (Node-RED\'s code)'],
  git_auth_failed: [400, 'the remote refused the credentials, or wants some that were not given (Node-RED\'s code)'],
  git_connection_failed: [400, 'the remote could not be reached (Node-RED\'s code)'],
  git_host_key_verification_failed: [400, "the SSH remote's host key is not the known one (Node-RED's code)"],
  git_not_a_repository: [400, 'the remote, or the project\'s own working copy (its .git damaged), is not a git repository (Node-RED\'s code)'],
  git_repository_not_found: [400, 'the remote has no such repository (Node-RED\'s code)'],
  git_local_overwrite: [400, 'local changes would be overwritten: commit or revert them first (Node-RED\'s code)'],
  git_pull_merge_conflict: [400, 'a pull or merge left conflicts to resolve (Node-RED\'s code)'],
  git_merge_conflict: [400, 'a deploy while the active project has a merge in progress: resolve and commit, or abort the merge, first (Node-RED\'s code)'],
  git_clone_too_large: [400, 'the repository grew past editorTheme.projects.maxCloneSize while cloning: the clone was stopped and removed (Runnel\'s code)'],
  git_pull_unrelated_history: [400, 'the remote branch shares no history with the local one: pull with allowUnrelatedHistories (Node-RED\'s code)'],
  git_delete_branch_unmerged: [400, 'the branch is not merged: delete it with force (Node-RED\'s code)'],
  git_remote_already_exists: [400, 'a remote of that name already exists (Node-RED\'s code)'],
  git_missing_user: [400, 'git needs a user name and e-mail: set them in the editor\'s user settings (Node-RED\'s code)'],
  git_push_failed: [400, 'the remote refused the push (not a fast-forward): pull first (Node-RED\'s code)'],
  invalid_key_name: [400, 'an SSH key name is not 1 to 64 letters, digits, "-" or "_"'],
  key_exists: [400, 'the user already has an SSH key of that name (Node-RED\'s code)'],
  key_passphrase_too_short: [400, 'an SSH key passphrase is shorter than 5 characters (Node-RED\'s code)'],
  key_length_too_short: [400, 'an SSH key size is below 1024 bits (Node-RED\'s code)'],
  key_length_too_long: [400, 'an SSH key size is above 16384 bits, the most ssh-keygen makes'],
  ssh_key_unreadable: [400, 'a stored SSH key does not decrypt with the credentialSecret (it was changed): generate the key again'],
  unauthorized: [401, 'no valid access token was sent'],
  invalid_token: [401, 'the access token is unknown, expired or revoked'],
  forbidden: [403, 'the operation is not allowed'],
  insufficient_scope: [401, "the token's permissions do not cover the operation (401 with RFC 6750's error, as Node-RED answers)"],
  cross_site_request: [403, 'a state-changing admin request came from a web page of another origin'],
  host_not_allowed: [403, 'the Host header names a host the unauthenticated admin API does not answer to (DNS rebinding)'],
  https_required: [403, 'requireHttps is set and a websocket (/comms) was opened over plain ws://; use wss://'],
  dependency_not_allowed: [403, 'a dependency of an uploaded or local module is not from the registry (file:, link:, git or URL)'],
  diagnostics_disabled: [403, 'GET /diagnostics is turned off by diagnostics.enabled: false'],
  install_not_allowed: [403, 'installing modules (or this module) is disabled by the settings'],
  update_not_allowed: [403, 'updating a module that is installed is disabled by the settings (allowUpdate, allowUpdateList, denyUpdateList)'],
  upload_not_allowed: [403, 'installing modules from uploaded tarballs is disabled by the settings'],
  local_path_not_allowed: [403, 'installing modules from a local path is disabled by the settings'],
  not_found: [404, 'no such route, module, node set or resource'],
  method_not_allowed: [405, 'the route does not take that method'],
  version_mismatch: [409, 'the rev sent is not the active rev: the flows changed since they were read'],
  project_version_mismatch: [409, 'on a cluster, the project was changed through another instance while this change was made: nothing of it was saved; look again and repeat it'],
  conflict: [409, 'the request conflicts with the current state'],
  history_credentials_unreadable: [409, 'the credentials kept with a revision do not decrypt with the current key'],
  request_timeout: [408, 'the request body stalled: no byte of it arrived within httpServerLimits.bodyTimeout'],
  precondition_failed: [412, "a file an http-in route sends fails the request's If-Match or If-Unmodified-Since"],
  payload_too_large: [413, 'the body or an uploaded file is larger than allowed'],
  unsupported_media_type: [415, 'the body has a content type the route does not take'],
  range_not_satisfiable: [416, "a file an http-in route sends has no part in the request's Range"],
  too_many_requests: [429, 'too many requests (login throttling); retry after the Retry-After header'],
  internal_error: [500, 'an unexpected server error (logged in full; the answer carries no internals)'],
  credentials_undecryptable: [500, 'the stored credentials do not decrypt with the configured key'],
  module_download_failed: [502, "a module's url could not be fetched (unreachable, an error status, or too slow)"],
  deploy_outcome_unknown: [503, 'the connection to the database was lost while a deploy was committed: send the same deploy with the same rev again (a retry of a deploy that was saved changes nothing, or answers 409 version_mismatch once this instance runs it: GET /flows shows it)'],
  storage_unavailable: [503, 'the shared database cannot be reached; nothing was changed: retry after the Retry-After header'],
  websocket_limit: [503, "a websocket node's listener refused the connection: webSocketNodeLimits (in all, per listener or per client address) is reached; retry after Retry-After"],
  server_busy: [503, 'the server holds as many request bodies as httpServerLimits.bodyBufferTotal allows; retry after Retry-After'],
  git_not_found: [503, 'Projects need git, and this server has none on PATH'],
  ssh_keygen_not_found: [503, 'generating an SSH key needs ssh-keygen (Debian\'s openssh-client), and this server has none on PATH'],
  npm_not_found: [503, 'installing or removing a module needs npm, and this server has none (beside node, as a dependency, or on PATH)'],
  route_pending: [503, 'an http-in request found no route while flows were starting or being deployed, and none came within httpNodeRouteWait; retry'],
  flow_restarted: [503, 'the flow handling an http-in request was redeployed while it was handled; retry'],
  install_timeout: [504, 'npm did not finish installing or removing the module in time'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERRORS, code);
}

/** The status a code is answered with. */
export function statusOf(code: ErrorCode): number {
  return ERRORS[code][0];
}

/** A failure a client can cause: a catalogued code (which fixes the HTTP status) and a message. */
export class RunnelError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'RunnelError';
    this.code = code;
    this.status = statusOf(code);
    this.details = details;
  }
}

export function isRunnelError(e: unknown): e is RunnelError {
  return e instanceof RunnelError;
}

/** A message safe to show for any thrown value. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}
