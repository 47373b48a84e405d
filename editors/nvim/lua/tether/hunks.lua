--- The hunks of an edit's changed window (`proposed.hunks`), for deciding them one by one.
local M = {}

--- The lines of a text with their line ends (`\r\n`, `\n` or `\r`).
---@param text string
---@return string[]
function M.keep_ends(text)
  local out, pos = {}, 1
  while pos <= #text do
    local s = text:find('[\r\n]', pos)
    if not s then
      table.insert(out, text:sub(pos))
      break
    end
    local e = (text:sub(s, s + 1) == '\r\n') and s + 1 or s
    table.insert(out, text:sub(pos, e))
    pos = e + 1
  end
  return out
end

local function strip(line)
  return (line:gsub('\r?\n$', ''):gsub('\r$', ''))
end

---@class tether.Hunk
---@field base_start integer 0-based line of the window where it starts
---@field removed string[] its old lines, with their ends
---@field added string[] its new lines, with their ends
---@field file_line integer 1-based line of the file where it starts

--- The window's hunks as runs of its lines (nil when the server sent none).
---@param proposed table the preview's `proposed`
---@return tether.Hunk[]?
function M.of(proposed)
  if type(proposed) ~= 'table' or type(proposed.hunks) ~= 'table' then
    return nil
  end
  local top = proposed.range.start.line
  local base = M.keep_ends(proposed.baseText or '')
  return vim.tbl_map(function(hunk)
    local first, stop = hunk.range.start, hunk.range['end']
    local start = first.line - top
    local count = stop.line - first.line + (stop.character > 0 and 1 or 0)
    return {
      base_start = start,
      removed = vim.list_slice(base, start + 1, start + count),
      added = M.keep_ends(hunk.text or ''),
      file_line = first.line + 1,
    }
  end, proposed.hunks)
end

--- The window's old text with the accepted hunks applied, the others left out.
---@param base_text string
---@param hunks tether.Hunk[]
---@param accepted boolean[]
---@return string
function M.rebuild(base_text, hunks, accepted)
  local base = M.keep_ends(base_text)
  local out, next_line = {}, 0
  for i, hunk in ipairs(hunks) do
    vim.list_extend(out, vim.list_slice(base, next_line + 1, hunk.base_start))
    vim.list_extend(out, accepted[i] and hunk.added or hunk.removed)
    next_line = hunk.base_start + #hunk.removed
  end
  vim.list_extend(out, vim.list_slice(base, next_line + 1))
  return table.concat(out)
end

--- The answer for a choice per hunk: all accepted → allow, none → deny, else an allow with
--- the window made of the accepted hunks (`editedText`: the server runs that and tells the
--- model the user changed the call), as VS Code's inline review answers.
---@param base_text string
---@param hunks tether.Hunk[]
---@param accepted boolean[]
---@return table answer
function M.verdict(base_text, hunks, accepted)
  local count = 0
  for i = 1, #hunks do
    count = count + (accepted[i] and 1 or 0)
  end
  if count == #hunks then
    return { decision = 'allow' }
  elseif count == 0 then
    return { decision = 'deny', feedback = 'the user rejected every change of this edit' }
  end
  return { decision = 'allow', editedText = M.rebuild(base_text, hunks, accepted) }
end

--- Where each hunk is among the lines of a unified diff (`-` lines then `+` lines, a run of
--- its own): `{ first, last }` 1-based, or nil when one of them cannot be found there.
---@param lines string[] the diff's lines
---@param hunks tether.Hunk[]
---@return integer[][]?
function M.locate(lines, hunks)
  local found, from = {}, 1
  local function changed(i)
    local c = (lines[i] or ''):sub(1, 1)
    return (c == '-' or c == '+')
      and not vim.startswith(lines[i], '---')
      and not vim.startswith(lines[i], '+++')
  end
  for _, hunk in ipairs(hunks) do
    local want = {}
    for _, l in ipairs(hunk.removed) do
      table.insert(want, '-' .. strip(l))
    end
    for _, l in ipairs(hunk.added) do
      table.insert(want, '+' .. strip(l))
    end
    local at
    for j = from, #lines - #want + 1 do
      if not changed(j - 1) and not changed(j + #want) then
        local same = true
        for k = 1, #want do
          if lines[j + k - 1] ~= want[k] then
            same = false
            break
          end
        end
        if same then
          at = j
          break
        end
      end
    end
    if not at or #want == 0 then
      return nil
    end
    table.insert(found, { at, at + #want - 1 })
    from = at + #want
  end
  return found
end

--- Float lines showing the hunks alone (when the diff does not show them one by one).
---@param header string[] the diff's `---`/`+++` lines
---@param hunks tether.Hunk[]
---@return string[] lines
---@return integer[][] where each hunk is
function M.render(header, hunks)
  local lines, where = vim.deepcopy(header), {}
  for _, hunk in ipairs(hunks) do
    table.insert(lines, string.format('@@ line %d @@', hunk.file_line))
    local first = #lines + 1
    for _, l in ipairs(hunk.removed) do
      table.insert(lines, '-' .. strip(l))
    end
    for _, l in ipairs(hunk.added) do
      table.insert(lines, '+' .. strip(l))
    end
    table.insert(where, { first, math.max(first, #lines) })
  end
  return lines, where
end

return M
