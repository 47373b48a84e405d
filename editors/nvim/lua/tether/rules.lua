--- Approval rules: the rule an approval offers to allow always (`pytest *`, `src/*.py`),
--- and `:TetherRules`, the list of the rules in force (`agent/rules/list`) where a key
--- revokes one (`agent/rules/remove`).
---
--- Session rules live in the server's memory of the editor session (the session every
--- `:Tether` continues, `tether.commands`), so the list asks for that session's rules too.
local M = {}

local protocol = require('tether.protocol')

M.name = 'tether://rules'

-- Programs whose second word is a subcommand worth keeping (`git commit *`, `npm run *`).
local SUBCOMMANDS = {}
for _, program in ipairs({
  'git', 'npm', 'pnpm', 'yarn', 'cargo', 'go', 'make', 'docker', 'kubectl', 'pip', 'uv',
  'poetry', 'dotnet', 'mvn', 'gradle', 'bundle', 'hatch', 'tox', 'nox', 'just', 'deno', 'bun',
}) do
  SUBCOMMANDS[program] = true
end

--- A word a pattern may hold as it is: no quoting, expansion, glob or path.
---@param word string
---@return boolean
local function plain(word)
  return word:match('^[%w_][%w_.+:-]*$') ~= nil
end

--- The `bash` rule offered for a command: its leading words and ` *` (`pytest *`,
--- `git commit *`). Nil when one rule could not cover it (pipes, `&&`, redirections,
--- substitutions, several lines): the server stores a rule only if it covers the call.
---@param command string
---@return string?
local function command_pattern(command)
  if command:find('[|&;<>()$`\n\\]') then
    return nil
  end
  local words = vim.split(vim.trim(command), '%s+')
  local first, second = words[1], words[2]
  if not first or not plain(first) or first:find('=', 1, true) then
    return nil
  end
  if second and SUBCOMMANDS[first] and plain(second) and not second:match('^%-') then
    return first .. ' ' .. second .. ' *'
  end
  return first .. ' *'
end

--- The edit rule offered for a file: the files of its folder with its extension
--- (`src/*.py`), else its name. Nil outside the workspace or for a name globs cannot say.
---@param uri string
---@param root? string the workspace folder
---@return string?
local function path_pattern(uri, root)
  if type(uri) ~= 'string' or not root then
    return nil
  end
  local path = vim.fs.normalize(vim.uri_to_fname(uri))
  root = vim.fs.normalize(root)
  if path:sub(1, #root + 1) ~= root .. '/' then
    return nil
  end
  local rel = path:sub(#root + 2)
  if rel == '' or rel:find('[%s%*%?%[%]{}\\!]') then
    return nil
  end
  local dir, name = rel:match('^(.*)/([^/]+)$')
  name = name or rel
  local ext = name:match('^[^.].*(%.[%w_-]+)$')
  local glob = ext and ('*' .. ext) or name
  return dir and (dir .. '/' .. glob) or glob
end

--- The rule an approval offers for "allow always": `{ tool, pattern }`, or nil.
---@param params table agent/approve params
---@param root? string the workspace folder
---@return { tool: string, pattern: string }?
function M.suggest(params, root)
  local shown = type(params.preview) == 'table' and params.preview or {}
  local pattern
  if params.tool == 'bash' and shown.kind == 'command' and type(shown.command) == 'string' then
    pattern = command_pattern(shown.command)
  elseif (params.tool == 'edit_file' or params.tool == 'write_file') and shown.kind == 'diff' then
    pattern = path_pattern(shown.uri, root)
  end
  return pattern and { tool = params.tool, pattern = pattern } or nil
end

--- The rule of a plain "allow always" (`A`), so that it is listed and revocable like any
--- other: for `bash` the exact command as a pattern (its words, no ` *`), for an edit or a
--- write every file of the workspace (`**`). Nil when a pattern cannot say exactly that
--- (quotes, globs, operators, expansions): `A` then sends a bare `allow-always`, which the
--- server keeps for the session without listing it.
---@param params table agent/approve params
---@return { tool: string, pattern: string }?
function M.exact(params)
  local shown = type(params.preview) == 'table' and params.preview or {}
  if params.tool == 'bash' and shown.kind == 'command' and type(shown.command) == 'string' then
    local words = vim.split(vim.trim(shown.command), '%s+')
    if words[1] == '' or words[1]:find('=', 1, true) then
      return nil
    end
    for _, word in ipairs(words) do
      if not word:match('^[%w_./:=@%%+,-]+$') then
        return nil
      end
    end
    return { tool = 'bash', pattern = table.concat(words, ' ') }
  elseif (params.tool == 'edit_file' or params.tool == 'write_file') and shown.kind == 'diff' then
    return { tool = params.tool, pattern = '**' }
  end
  return nil
end

--- The scope a picked rule is stored in (`setup({ rule_scope = ... })`, default session).
---@return 'session'|'project'|'user'
function M.scope()
  return require('tether').config.rule_scope or 'session'
end

--- The client and the editor session the rules are asked of.
---@return vim.lsp.Client?
---@return string? session_id
local function target()
  local client = require('tether').get_client()
  if not client then
    return nil
  end
  return client, require('tether.commands').editor_session(client.id)
end

--- The rules in force (`agent/rules/list`), the editor session's first.
---@param callback fun(err?: string, rules?: table[], result?: table)
function M.fetch(callback)
  local client, session_id = target()
  if not client then
    return callback('no Tether server is running')
  end
  local params = session_id and { sessionId = session_id } or vim.empty_dict()
  require('tether').request(client, protocol.methods.agentRulesList, params, function(err, result)
    if err or type(result) ~= 'table' or type(result.rules) ~= 'table' then
      return callback(err and (err.message or vim.inspect(err)) or 'no rules in the answer')
    end
    callback(nil, result.rules, result)
  end)
end

--- Revokes a rule as listed (`agent/rules/remove`).
---@param rule table
---@param callback fun(err?: string, removed?: boolean)
function M.remove(rule, callback)
  local client, session_id = target()
  if not client then
    return callback('no Tether server is running')
  end
  local params = { rule = rule, sessionId = session_id }
  require('tether').request(client, protocol.methods.agentRulesRemove, params, function(err, result)
    if err then
      return callback(err.message or vim.inspect(err))
    end
    callback(nil, type(result) == 'table' and result.removed == true)
  end)
end

local SOURCES = {
  session = 'this editor session',
  project = 'this project',
  user = 'your rules file',
  builtin = 'built-in read-only',
}

--- One line of the list.
---@param rule table
---@return string
function M.format(rule)
  return string.format(
    '%-8s %-6s %-11s %-30s %s',
    rule.scope or 'session',
    rule.decision,
    rule.tool,
    rule.pattern,
    SOURCES[rule.scope or 'session'] or ''
  )
end

local HEADER = {
  'Tether rules   x revoke · r refresh · q close',
  string.format('%-8s %-6s %-11s %-30s %s', 'scope', 'rule', 'tool', 'pattern', 'source'),
}

local view = { buf = nil, rules = {} } ---@type { buf?: integer, rules: table[] }

local function set_lines(lines)
  local buf = view.buf
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

--- Fills the `:TetherRules` buffer from the server.
---@param done? fun()
function M.refresh(done)
  M.fetch(function(err, rules)
    local lines = vim.list_extend({}, HEADER)
    view.rules = rules or {}
    if err then
      table.insert(lines, 'cannot list the rules: ' .. err)
    elseif #view.rules == 0 then
      table.insert(lines, 'no rule: "allow always" with a rule (key r of an approval) adds one')
    end
    for _, rule in ipairs(view.rules) do
      table.insert(lines, M.format(rule))
    end
    set_lines(lines)
    vim.api.nvim_exec_autocmds('User', { pattern = 'TetherRules', modeline = false })
    if done then
      done()
    end
  end)
end

--- Revokes the rule under the cursor of the `:TetherRules` buffer, then lists again.
function M.revoke_at_cursor()
  local row = vim.api.nvim_win_get_cursor(0)[1] - #HEADER
  local rule = view.rules[row]
  if not rule then
    return vim.notify('Tether: no rule on this line', vim.log.levels.INFO)
  end
  if rule.scope == 'builtin' then
    return vim.notify(
      'Tether: built-in rules are turned off with settings.read_only_defaults = false '
        .. 'in your rules file',
      vim.log.levels.WARN
    )
  end
  M.remove(rule, function(err, removed)
    if err then
      vim.notify('Tether: cannot revoke: ' .. err, vim.log.levels.ERROR)
    elseif not removed then
      vim.notify('Tether: that rule was already gone', vim.log.levels.INFO)
    else
      vim.notify(string.format('Tether: revoked %s: %s', rule.tool, rule.pattern))
    end
    M.refresh()
  end)
end

--- `:TetherRules`: the rules in force in a scratch buffer (below), with keys to revoke and
--- refresh.
function M.open()
  local buf = view.buf
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = 'wipe'
    vim.bo[buf].modifiable = false
    vim.api.nvim_buf_set_name(buf, M.name)
    view.buf = buf
    local function map(lhs, fn, desc)
      vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = 'Tether: ' .. desc })
    end
    map('x', M.revoke_at_cursor, 'revoke the rule')
    map('r', M.refresh, 'list the rules again')
    map('q', '<Cmd>close<CR>', 'close the rules')
  end
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.api.nvim_open_win(buf, true, { split = 'below', win = -1, height = 10 })
  else
    vim.api.nvim_set_current_win(win)
  end
  set_lines(vim.list_extend(vim.list_extend({}, HEADER), { 'listing…' }))
  M.refresh()
end

--- The rules listed now in the `:TetherRules` buffer (for tests and statuslines).
---@return table[]
function M.listed()
  return view.rules
end

return M
