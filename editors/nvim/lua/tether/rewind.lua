--- `:TetherRewind`: goes back to before a step of the session. Lists the session's
--- checkpoints (`agent/checkpoints`, newest first) with `vim.ui.select`, asks what to
--- restore (files and conversation, files, conversation), sends `agent/rewind` and says
--- what was restored and what conflicted; conflicts (a file changed since by someone else,
--- or unsaved typing in its buffer) are kept, unless the user then forces them. Restored
--- files that are open come back through their buffers (the server's edit path).
local M = {}

local protocol = require('tether.protocol')

local function shown(text)
  return require('tether.render').shown(type(text) == 'string' and text or '', true)
end

local function notify(message, level)
  vim.notify('Tether: ' .. message, level or vim.log.levels.INFO)
end

--- A file URI as the path to show (relative to the current folder when under it).
---@param uri any
---@return string
local function path_of(uri)
  if type(uri) ~= 'string' then
    return '?'
  end
  local ok, name = pcall(vim.uri_to_fname, uri)
  return shown(ok and vim.fn.fnamemodify(name, ':~:.') or uri)
end

--- One checkpoint as a line: `step 2 · bash: make · README.md (modified), … · 15:40:12`.
---@param checkpoint table
---@return string
function M.format(checkpoint)
  local files = {}
  for _, file in ipairs(type(checkpoint.files) == 'table' and checkpoint.files or {}) do
    local path = shown(type(file.path) == 'string' and file.path or '')
    if path == '' then
      path = path_of(file.uri)
    end
    local mark = file.restorable == false and ', not restorable' or ''
    table.insert(files, string.format('%s (%s%s)', path, shown(file.change), mark))
  end
  local what = #files > 0 and table.concat(files, ', ') or 'no files changed'
  if type(checkpoint.incomplete) == 'string' then
    what = what .. ' · incomplete: ' .. shown(checkpoint.incomplete)
  end
  local title = checkpoint.title
  if type(title) ~= 'string' or title == '' then
    title = checkpoint.tool
  end
  local when = require('tether.sessions').epoch(checkpoint.time)
  return string.format(
    'step %s · %s · %s · %s',
    shown(tostring(checkpoint.step)),
    vim.fn.strcharpart(shown(title), 0, 80),
    what,
    when and os.date('%H:%M:%S', when) or '?'
  )
end

--- The session to rewind: the chat's when in a chat, else the latest run's of `client`.
---@param client vim.lsp.Client
---@return string?
function M.session(client)
  local chat = require('tether.chat').get(vim.api.nvim_get_current_buf())
  if chat and chat.session_id then
    return chat.session_id
  end
  local commands = require('tether.commands')
  for i = #commands.order, 1, -1 do
    local run = commands.runs[commands.order[i]]
    if run and run.session_id and run.client_id == client.id then
      return run.session_id
    end
  end
  return commands.editor_session(client.id)
end

---@param list any
---@return string[]
local function paths(list)
  return vim.tbl_map(path_of, type(list) == 'table' and list or {})
end

local function count(n, what)
  return string.format('%d %s%s', n, what, n == 1 and '' or 's')
end

--- What a rewind answered, as one message.
---@param checkpoint table
---@param result table
---@return string
function M.describe(checkpoint, result)
  local restored = paths(result.restored)
  local step = shown(tostring(checkpoint.step))
  local parts = {
    string.format('rewound to before step %s: %s restored', step, count(#restored, 'file')),
  }
  if #restored > 0 then
    parts[1] = parts[1] .. ' (' .. table.concat(restored, ', ') .. ')'
  end
  for _, path in ipairs(paths(result.conflicts)) do
    table.insert(parts, 'conflict: ' .. path .. ' changed since, kept as you have it')
  end
  for _, path in ipairs(paths(result.notRestorable)) do
    table.insert(parts, 'not restorable: ' .. path .. ' (its earlier content was not kept)')
  end
  for _, path in ipairs(paths(result.failed)) do
    table.insert(parts, 'failed: ' .. path)
  end
  if result.conversation == true then
    table.insert(parts, 'the conversation continues from before that step')
  end
  if type(result.note) == 'string' and result.note ~= '' then
    table.insert(parts, shown(result.note))
  end
  return table.concat(parts, '\n')
end

local RESTORE = {
  { label = 'files and conversation', restore = 'both' },
  { label = 'files only', restore = 'files' },
  { label = 'conversation only', restore = 'conversation' },
}

---@param client vim.lsp.Client
---@param params table
---@param checkpoint table
local function rewind(client, params, checkpoint)
  local request = require('tether.client').request
  request(client, protocol.methods.agentRewind, params, function(err, result)
    if err or type(result) ~= 'table' then
      return notify('rewind: ' .. shown(err and err.message or 'no answer'), vim.log.levels.ERROR)
    end
    local conflicts = type(result.conflicts) == 'table' and result.conflicts or {}
    local level = #conflicts > 0 and vim.log.levels.WARN or vim.log.levels.INFO
    notify(M.describe(checkpoint, result), level)
    if #conflicts == 0 or params.force then
      return
    end
    local choices = { 'keep mine', "force: put the checkpoint's version back" }
    local which = table.concat(paths(conflicts), ', ')
    vim.ui.select(choices, {
      prompt = string.format('Tether: %s conflicted (%s)', count(#conflicts, 'file'), which),
    }, function(_, index)
      if index ~= 2 then
        return
      end
      local again = vim.tbl_extend('force', params, { restore = 'files', force = true })
      rewind(client, again, checkpoint)
    end)
  end)
end

--- `:TetherRewind`.
function M.open()
  local client = require('tether.client').get()
  if not client then
    return notify('no Tether server is running for this buffer', vim.log.levels.WARN)
  end
  local session = M.session(client)
  if not session then
    return notify('no session to rewind yet: run a prompt first', vim.log.levels.WARN)
  end
  local request = require('tether.client').request
  request(client, protocol.methods.agentCheckpoints, { sessionId = session }, function(err, result)
    if err or type(result) ~= 'table' or type(result.checkpoints) ~= 'table' then
      local why = shown(err and err.message or 'no answer')
      return notify('checkpoints: ' .. why, vim.log.levels.ERROR)
    end
    if #result.checkpoints == 0 then
      return notify('no checkpoints in this session: no step changed files yet')
    end
    local newest_first = {}
    for i = #result.checkpoints, 1, -1 do
      table.insert(newest_first, result.checkpoints[i])
    end
    local pick = { prompt = 'Tether: rewind to before', format_item = M.format }
    vim.ui.select(newest_first, pick, function(checkpoint)
      if not checkpoint then
        return
      end
      vim.ui.select(RESTORE, {
        prompt = 'Tether: restore',
        format_item = function(item)
          return item.label
        end,
      }, function(choice)
        if not choice then
          return
        end
        rewind(client, {
          sessionId = session,
          checkpointId = checkpoint.id,
          restore = choice.restore,
        }, checkpoint)
      end)
    end)
  end)
end

return M
