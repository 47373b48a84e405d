--- The chat's own session commands, offered after the server's (`agent/commands`), as the
--- terminal chat and the Emacs chat offer them: `/resume` lists the project's sessions
--- (`agent/sessions`) and `/resume N` goes on with one in the chat; `/rules` lists the
--- approval rules in force (`agent/rules/list`) and `/rules remove N` revokes one
--- (`agent/rules/remove`). A name the server lists is the server's (chat.lua).
local M = {}

---@type table[] `{ name, description, argument }`, in the order they are offered
M.list = {
  {
    name = 'resume',
    argument = '[N|ID]',
    description = "the project's sessions; /resume N continues one in this chat",
  },
  {
    name = 'rules',
    argument = '[remove N]',
    description = 'the approval rules in force; /rules remove N revokes one',
  },
}

--- Whether `name` is one of the chat's own.
---@param name string
---@return boolean
function M.has(name)
  for _, command in ipairs(M.list) do
    if command.name == name then
      return true
    end
  end
  return false
end

---@param text any
---@return string
local function one_line(text)
  local line = (type(text) == 'string' and text or ''):gsub('[\r\n\t]+', ' ')
  return vim.trim(line)
end

---@type table<integer, string[]> chat buffer → the session ids `/resume` listed last
local listed = {}

--- `/resume [argument]`: `done(lines, session_id?)`, the session to go on with when one was
--- picked.
---@param client vim.lsp.Client
---@param chat tether.Chat
---@param argument string '' for none
---@param done fun(lines: string[], session_id?: string)
local function resume(client, chat, argument, done)
  local request = require('tether.client').request
  request(client, 'agent/sessions', { limit = 20 }, function(err, result)
    if err or type(result) ~= 'table' or type(result.sessions) ~= 'table' then
      return done({ '✗ /resume: ' .. (err and err.message or 'no sessions in the answer') })
    end
    local sessions = result.sessions
    if argument == '' then
      listed[chat.buf] = vim.tbl_map(function(s)
        return s.sessionId
      end, sessions)
      if #sessions == 0 then
        return done({ 'no session in this project yet' })
      end
      local lines = {}
      for number, s in ipairs(sessions) do
        local runs = tonumber(s.runs) or 0
        local when = require('tether.sessions').epoch(s.updatedAt)
        local outcome = s.lastOutcome ~= vim.NIL and s.lastOutcome or 'running'
        table.insert(
          lines,
          string.format(
            '%s%2d  %s  %d run%s · %s  %s',
            s.sessionId == chat.session_id and '*' or ' ',
            number,
            when and os.date('%Y-%m-%d %H:%M', when) or '?',
            runs,
            runs == 1 and '' or 's',
            outcome,
            vim.fn.strcharpart(one_line(s.title), 0, 60)
          )
        )
      end
      table.insert(lines, '/resume N continues one in this chat')
      return done(lines)
    end
    local ids = listed[chat.buf]
      or vim.tbl_map(function(s)
        return s.sessionId
      end, sessions)
    local number = argument:match('^%d+$') and tonumber(argument)
    local id = number and ids[number] or argument
    if number and not id then
      return done({ string.format('no session number %d: /resume lists %d', number, #ids) })
    end
    for _, s in ipairs(sessions) do
      if s.sessionId == id then
        return done({ string.format('resumed session %s: %s', id, one_line(s.title)) }, id)
      end
    end
    done({ string.format('no session %s in this project: /resume lists them', id) })
  end)
end

---@param rule table
---@return string
local function describe(rule)
  return string.format('%s %s `%s`', rule.decision, one_line(rule.tool), one_line(rule.pattern))
end

--- `/rules [remove N]`: `done(lines)`.
---@param client vim.lsp.Client
---@param chat tether.Chat
---@param argument string
---@param done fun(lines: string[])
local function rules(client, chat, argument, done)
  local which = argument:match('^remove%s+(%d+)$')
  if argument ~= '' and not which then
    return done({ '/rules, or /rules remove N' })
  end
  local request = require('tether.client').request
  local session = chat.session_id and { sessionId = chat.session_id } or vim.empty_dict()
  request(client, 'agent/rules/list', session, function(err, result)
    if err or type(result) ~= 'table' or type(result.rules) ~= 'table' then
      return done({ '✗ /rules: ' .. (err and err.message or 'no rules in the answer') })
    end
    local all = result.rules
    if not which then
      local row = '%3s  %-10s %-8s %-8s %s'
      local lines = { row:format('#', 'tool', 'decision', 'scope', 'pattern') }
      for number, rule in ipairs(all) do
        local tool, pattern = one_line(rule.tool), one_line(rule.pattern)
        table.insert(lines, row:format(number, tool, rule.decision, rule.scope, pattern))
      end
      if #all == 0 then
        table.insert(lines, '  (no rules)')
      end
      local defaults = result.readOnlyDefaults == true and 'on' or 'off'
      vim.list_extend(lines, {
        string.format('built-in read-only commands: %s (settings.read_only_defaults)', defaults),
        '/rules remove N revokes one',
      })
      return done(lines)
    end
    local rule = all[tonumber(which)]
    if not rule then
      return done({ string.format('no rule number %s: /rules lists %d', which, #all) })
    elseif rule.scope == 'builtin' then
      return done({
        describe(rule)
          .. ' is built in: read_only_defaults = false under [settings] in your rules file'
          .. ' turns the built-in ones off',
      })
    end
    local params = { rule = rule, sessionId = chat.session_id }
    request(client, 'agent/rules/remove', params, function(remove_err, answer)
      if remove_err then
        return done({ '✗ /rules: ' .. (remove_err.message or 'failed') })
      end
      local removed = type(answer) == 'table' and answer.removed == true
      done({ removed and ('removed ' .. describe(rule)) or 'that rule was already gone' })
    end)
  end)
end

--- Runs the chat's own command `name`; `done` gets the lines to show (and, for `/resume`,
--- the session to go on with).
---@param client vim.lsp.Client
---@param chat tether.Chat
---@param name string
---@param argument string
---@param done fun(lines: string[], session_id?: string)
function M.run(client, chat, name, argument, done)
  if name == 'resume' then
    resume(client, chat, argument, done)
  else
    rules(client, chat, argument, done)
  end
end

return M
