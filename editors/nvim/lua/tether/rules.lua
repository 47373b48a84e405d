--- Approval rules: `:TetherRules`, the list of the rules in force (`agent/rules/list`) where
--- a key revokes one (`agent/rules/remove`), and the scope a picked rule is stored in. The
--- rules an approval offers come from the server (`suggestedPatterns`, see approve.lua).
---
--- Session rules live in the server's memory of the editor session (the session every
--- `:Tether` continues, `tether.commands`), so the list asks for that session's rules too.
local M = {}

local protocol = require('tether.protocol')

M.name = 'tether://rules'

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
      table.insert(lines, 'no rule: "allow always" (key A or r of an approval) adds one')
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
