-- The chat's own session commands, next to the server's: `/resume` lists the project's
-- sessions and `/resume 1` (after `/new`) goes on with the first in the chat; `/rules`
-- lists the rules in force and `/rules remove N` revokes the user's `echo *` rule.
local H = dofile(vim.env.HARNESS)
H.setup({})
local chat_mod = require('tether.chat')
H.result.runs = {}

local function text(buf)
  return table.concat(H.lines(buf), '\n')
end

local function count(buf, needle)
  local _, n = text(buf):gsub(vim.pesc(needle), '')
  return n
end

--- Types `message` as a new message and sends it; `then_` once `needle` shows `times` times.
local function send(buf, message, needle, times, then_)
  H.input('i' .. message .. '<C-s>')
  H.when(function()
    return count(buf, needle) >= times and vim.bo[buf].modifiable
  end, then_)
end

H.on('TetherRunFinished', function(data)
  table.insert(H.result.runs, H.capture(data).params)
end)

local function steps(buf)
  H.result.items = vim.tbl_map(function(item)
    return item.word
  end, chat_mod.complete(0, '/'))
  send(buf, 'hello', '■ done', 1, function()
    send(buf, '/resume', '/resume N continues one', 1, function()
      H.result.listed = H.lines(buf)
      send(buf, '/new', 'a new session starts', 1, function()
        send(buf, '/resume 1', 'resumed session', 1, function()
          send(buf, 'again', '■ done', 2, function()
            send(buf, '/rules', 'built-in read-only commands', 1, function()
              local number
              for _, line in ipairs(H.lines(buf)) do
                number = number or line:match('^%s*(%d+)%s+bash%s+allow%s+user%s+echo %*$')
              end
              H.result.rule_number = number or vim.NIL
              send(buf, '/rules remove ' .. (number or '0'), 'removed allow', 1, function()
                H.result.lines = H.lines(buf)
                H.finish('done')
              end)
            end)
          end)
        end)
      end)
    end)
  end)
end

H.input(':TetherChat<CR>')
H.when(function()
  return chat_mod.current() ~= nil and vim.api.nvim_get_current_buf() == chat_mod.current().buf
end, function()
  local buf = chat_mod.current().buf
  local client = assert(require('tether').ensure_client(buf))
  require('tether.client').when_ready(client, buf, function()
    steps(buf)
  end)
end)
