/**
 * The queue nodes' editor definition, edit dialogs and help, as a node set's .html is for the
 * editor. Kept in a module rather than a file beside it so it ships in dist/ with the code.
 */
const QUEUE_ROW = `
    <div class="form-row">
        <label for="node-input-queue"><i class="fa fa-database"></i> Queue</label>
        <input type="text" id="node-input-queue" placeholder="orders">
    </div>`;
const NAME_ROW = `
    <div class="form-row">
        <label for="node-input-name"><i class="fa fa-tag"></i> Name</label>
        <input type="text" id="node-input-name">
    </div>`;

export const QUEUE_NODES_HTML = String.raw`
<script type="text/javascript">
(function() {
    function validName(v) { return typeof v === "string" && v.trim() !== "" && v.length <= 100 && !/[\u0000-\u001f\u007f]/.test(v); }
    function positive(v) { return v === "" || v === undefined || (/^\d+$/.test(String(v)) && Number(v) > 0); }
    /** What both queue nodes share: their look, label, and the queue and name properties. */
    function registerQueueNode(type, own) {
        RED.nodes.registerType(type, Object.assign({
            category: "network",
            color: "#c7e9c0",
            icon: "db.svg",
            paletteLabel: type,
            label: function() { return this.name || (this.queue ? type + ": " + this.queue : type); },
            labelStyle: function() { return this.name ? "node_label_italic" : ""; }
        }, own, {
            defaults: Object.assign({
                name: { value: "" },
                queue: { value: "", required: true, validate: validName }
            }, own.defaults)
        }));
    }
    registerQueueNode("queue out", {
        defaults: {
            whenFull: { value: "error" },
            maxLength: { value: "", validate: positive }
        },
        inputs: 1,
        outputs: 1,
        align: "right"
    });
    registerQueueNode("queue in", {
        defaults: {
            concurrency: { value: 1, validate: positive },
            key: { value: "topic" },
            maxAttempts: { value: 5, validate: positive },
            timeout: { value: 60, validate: positive }
        },
        inputs: 0,
        outputs: 2,
        outputLabels: ["message", "dead letter"]
    });
})();
</script>

<script type="text/html" data-template-name="queue out">
${QUEUE_ROW}
    <div class="form-row">
        <label for="node-input-whenFull"><i class="fa fa-hand-paper-o"></i> When full</label>
        <select id="node-input-whenFull" style="width: 70%">
            <option value="error">fail the message (catchable)</option>
            <option value="wait">wait for room</option>
        </select>
    </div>
    <div class="form-row">
        <label for="node-input-maxLength"><i class="fa fa-tasks"></i> Bound</label>
        <input type="text" id="node-input-maxLength" placeholder="100000" style="width: 100px"> messages
    </div>
${NAME_ROW}
</script>

<script type="text/html" data-template-name="queue in">
${QUEUE_ROW}
    <div class="form-row">
        <label for="node-input-concurrency"><i class="fa fa-random"></i> Concurrency</label>
        <input type="text" id="node-input-concurrency" style="width: 100px"> messages at once on each instance
    </div>
    <div class="form-row">
        <label for="node-input-key"><i class="fa fa-key"></i> Order by</label>
        msg.<input type="text" id="node-input-key" placeholder="empty: no order" style="width: 60%">
    </div>
    <div class="form-row">
        <label for="node-input-maxAttempts"><i class="fa fa-repeat"></i> Attempts</label>
        <input type="text" id="node-input-maxAttempts" style="width: 100px"> then the dead-letter output
    </div>
    <div class="form-row">
        <label for="node-input-timeout"><i class="fa fa-clock-o"></i> Timeout</label>
        <input type="text" id="node-input-timeout" style="width: 100px"> seconds per attempt
    </div>
${NAME_ROW}
</script>

<script type="text/html" data-help-name="queue out">
    <p>Stores each message on a durable queue, and passes it on once the queue has it.</p>
    <h3>Details</h3>
    <p>The message is on disk (the file storage) or in PostgreSQL (a cluster) before it is passed on, so an
    <code>http in</code> flow can answer "accepted" only when the message is safe. Any <code>queue in</code> node
    of the same queue name, on any instance, takes it.</p>
    <p>The message is stored as JSON: Buffers keep Node-RED's encoding, Dates become strings; <code>msg.req</code>
    and <code>msg.res</code> are left out. A message with a function, a BigInt or a circular reference, or larger
    than <code>queues.maxMessageBytes</code> (1 MiB), fails with an error a <code>catch</code> node can take.</p>
    <p>When the queue holds its bound of messages, the message fails with <code>queue_full</code>, or waits for room
    when <i>When full</i> says so.</p>
</script>

<script type="text/html" data-help-name="queue in">
    <p>Takes messages off a durable queue. Each message is acknowledged when the flow after this node has
    finished with it; if the instance dies first, another instance gets it again.</p>
    <h3>Outputs</h3>
    <ol class="node-ports">
        <li>The message
            <dl class="message-properties">
                <dt>_msgid <span class="property-type">string</span></dt><dd>stable across redeliveries: use it to de-duplicate.</dd>
                <dt>redelivered <span class="property-type">boolean</span></dt><dd>true when an earlier attempt did not finish.</dd>
                <dt>attempts <span class="property-type">number</span></dt><dd>this attempt's number, from 1.</dd>
            </dl>
        </li>
        <li>Dead letters: messages whose attempts ran out.</li>
    </ol>
    <h3>Details</h3>
    <p>An attempt fails when a node after this one completes the message with an error (<code>done(err)</code>)
    or it is not finished within the timeout; it is tried again after a back-off (1 s, doubling, at most a minute).</p>
    <p>Messages with the same value of the <i>Order by</i> property are handled one at a time, in order, across the
    whole cluster; messages without it are not held back. With <i>Order by</i> left empty no message is held back
    for another: each goes to whichever consumer is free.</p>
</script>
`;
