;;; tether-chat-commands.el --- The session commands of *tether-chat*  -*- lexical-binding: t; -*-

;;; Commentary:

;; A chat message `/name [argument]' naming a session command runs it instead of
;; going to the model.  The server defines the session commands (`agent/commands'
;; lists them: /undo, /new, /model, /compact, /cost...) and runs them
;; (`agent/command'); the chat adds its own two, as the terminal chat does:
;; /resume (the project's sessions, `agent/sessions'; /resume N goes on with one in
;; this chat) and /rules (the approval rules in force, `agent/rules/list'; /rules
;; remove N revokes one).  A name the server lists is always the server's.
;; `/' typed at an empty prompt lists them; TAB completes one (`completion-at-point').

;;; Code:

(require 'jsonrpc)
(require 'parse-time)
(require 'subr-x)
(require 'tether)

(defconst tether-chat-commands-own
  '((:name "resume" :argument "[N|ID]"
           :description "the project's sessions; /resume N continues one in this chat")
    (:name "rules" :argument "[remove N]"
           :description "the approval rules in force; /rules remove N revokes one"))
  "The chat's own commands, offered after the server's.")

(defun tether-chat-commands--process (connection)
  "The process of CONNECTION (its properties hold what was asked of it)."
  (jsonrpc--process connection))

(defun tether-chat-commands-of-server (connection)
  "CONNECTION's session commands (`agent/commands', asked once), or nil."
  (when-let ((process (and connection (tether-chat-commands--process connection))))
    (or (process-get process 'tether-commands)
        (condition-case nil
            (let ((listed (append (plist-get (jsonrpc-request connection 'agent/commands
                                                              (make-hash-table) :timeout 10)
                                             :commands)
                                  nil)))
              (process-put process 'tether-commands listed)
              listed)
          (error nil)))))

(defun tether-chat-commands-all (connection)
  "Every command the chat offers on CONNECTION: the server's, then the chat's own."
  (let ((server (tether-chat-commands-of-server connection)))
    (append server
            (seq-remove (lambda (own)
                          (seq-find (lambda (c) (equal (plist-get c :name) (plist-get own :name)))
                                    server))
                        tether-chat-commands-own))))

(defun tether-chat-commands-parse (text connection)
  "(NAME ARGUMENT SERVERP) when TEXT is `/name [argument]' naming a command, else nil.
ARGUMENT is nil when there is none; SERVERP when CONNECTION's server runs it."
  (when (string-match "\\`/\\([[:alnum:]_-]+\\)\\(?:[ \t]+\\([^\n]*?\\)\\)?[ \t]*\\'" text)
    (let* ((name (match-string 1 text))
           (argument (match-string 2 text))
           (server (seq-find (lambda (c) (equal (plist-get c :name) name))
                             (tether-chat-commands-of-server connection))))
      (when (or server (seq-find (lambda (c) (equal (plist-get c :name) name))
                                 tether-chat-commands-own))
        (list name (and argument (not (string-empty-p argument)) argument) (and server t))))))

;;; Completion

(defun tether-chat-commands-completion (input connect)
  "`completion-at-point' data for a `/command' typed from INPUT to point.
CONNECT returns the connection, started if need be (only for a `/command')."
  (when (and (>= (point) input)
             (string-match-p "\\`/[[:alnum:]_-]*\\'"
                             (buffer-substring-no-properties input (point))))
    (let* ((commands (tether-chat-commands-all (ignore-errors (funcall connect))))
           (words (mapcar (lambda (c) (concat "/" (plist-get c :name))) commands)))
      (list input (point)
            (lambda (string predicate action)  ; in the server's order, not sorted
              (if (eq action 'metadata)
                  '(metadata (display-sort-function . identity)
                             (cycle-sort-function . identity))
                (complete-with-action action words string predicate)))
            :exclusive 'no
            :annotation-function
            (lambda (word)
              (when-let ((command (seq-find (lambda (c) (equal (concat "/" (plist-get c :name)) word))
                                            commands)))
                (concat (and (plist-get command :argument)
                             (concat " " (plist-get command :argument)))
                        " — " (plist-get command :description))))))))

;;; The chat's own commands

(defvar-local tether-chat-commands--listed nil
  "The session ids `/resume' listed last, for `/resume N'.")

(defun tether-chat-commands--time (stamp)
  "An ISO 8601 STAMP as local `YYYY-MM-DD HH:MM' (as it is if it does not parse)."
  (condition-case nil
      (format-time-string "%Y-%m-%d %H:%M" (parse-iso8601-time-string stamp))
    (error (or stamp "?"))))

(defun tether-chat-commands--one-line (text)
  "TEXT on one line."
  (string-trim (replace-regexp-in-string "[\n\r\t]+" " " (or text ""))))

(defun tether-chat-commands-resume (connection argument session done)
  "`/resume [ARGUMENT]' in the chat whose session is SESSION, on CONNECTION.
Calls DONE with the lines to show and, to go on with one, its session id."
  (jsonrpc-async-request
   connection 'agent/sessions (list :limit 20)
   :timeout 30
   :success-fn
   (lambda (result)
     (let ((sessions (append (plist-get result :sessions) nil)))
       (cond
        ((null argument)
         (setq tether-chat-commands--listed
               (mapcar (lambda (s) (plist-get s :sessionId)) sessions))
         (funcall done
                  (if (null sessions)
                      (list "no session in this project yet")
                    (append
                     (let ((number 0))
                       (mapcar (lambda (s)
                                 (setq number (1+ number))
                                 (let ((runs (or (plist-get s :runs) 0)))
                                   (format "%s%2d  %s  %d run%s · %s  %s"
                                           (if (equal (plist-get s :sessionId) session) "*" " ")
                                           number
                                           (tether-chat-commands--time (plist-get s :updatedAt))
                                           runs (if (eql runs 1) "" "s")
                                           (or (plist-get s :lastOutcome) "running")
                                           (truncate-string-to-width
                                            (tether-chat-commands--one-line (plist-get s :title))
                                            60 nil nil "…"))))
                               sessions))
                     (list "/resume N continues one in this chat"))))
         nil)
        (t
         (let* ((ids (or tether-chat-commands--listed
                         (mapcar (lambda (s) (plist-get s :sessionId)) sessions)))
                (id (if (string-match-p "\\`[0-9]+\\'" argument)
                        (nth (1- (string-to-number argument)) ids)
                      argument))
                (found (seq-find (lambda (s) (equal (plist-get s :sessionId) id)) sessions)))
           (cond
            ((and (string-match-p "\\`[0-9]+\\'" argument) (null id))
             (funcall done (list (format "no session number %s: /resume lists %d"
                                         argument (length ids)))))
            ((null found)
             (funcall done (list (format "no session %s in this project: /resume lists them" id))))
            (t
             (funcall done (list (format "resumed session %s: %s" id
                                         (tether-chat-commands--one-line
                                          (plist-get found :title))))
                      id))))))))
   :error-fn (lambda (error) (funcall done (list (format "✗ /resume: %s" (plist-get error :message)))))))

(defun tether-chat-commands--rule-line (number rule)
  "RULE as the NUMBERth line of `/rules'."
  (format "%3d  %-10s %-8s %-8s %s" number
          (tether-chat-commands--one-line (plist-get rule :tool)) (plist-get rule :decision)
          (plist-get rule :scope) (tether-chat-commands--one-line (plist-get rule :pattern))))

(defun tether-chat-commands-rules (connection argument session done)
  "`/rules [remove N]' in the chat whose session is SESSION, on CONNECTION.
Calls DONE with the lines to show."
  (let ((params (if session (list :sessionId session) (make-hash-table)))
        (which (and argument (string-match "\\`remove[ \t]+\\([0-9]+\\)\\'" argument)
                    (string-to-number (match-string 1 argument))))
        (failed (lambda (error) (funcall done (list (format "✗ /rules: %s"
                                                            (plist-get error :message)))))))
    (if (and argument (not which))
        (funcall done (list "/rules, or /rules remove N"))
      (jsonrpc-async-request
       connection 'agent/rules/list params
       :timeout 30
       :success-fn
       (lambda (listed)
         (let ((rules (append (plist-get listed :rules) nil)))
           (if (not which)
               (funcall done
                        (append
                         (list (format "%3s  %-10s %-8s %-8s %s" "#" "tool" "decision" "scope"
                                       "pattern"))
                         (let ((number 0))
                           (mapcar (lambda (rule)
                                     (tether-chat-commands--rule-line (setq number (1+ number))
                                                                      rule))
                                   rules))
                         (unless rules (list "  (no rules)"))
                         (list (format "built-in read-only commands: %s (settings.read_only_defaults)"
                                       (if (eq (plist-get listed :readOnlyDefaults) t) "on" "off"))
                               "/rules remove N revokes one")))
             (let ((rule (and (<= 1 which (length rules)) (nth (1- which) rules))))
               (cond
                ((null rule)
                 (funcall done (list (format "no rule number %d: /rules lists %d" which
                                             (length rules)))))
                ((equal (plist-get rule :scope) "builtin")
                 (funcall done (list (format "%s %s `%s` is built in: read_only_defaults = false \
under [settings] in your rules file turns the built-in ones off"
                                             (plist-get rule :decision) (plist-get rule :tool)
                                             (plist-get rule :pattern)))))
                (t
                 (jsonrpc-async-request
                  connection 'agent/rules/remove
                  (append (list :rule rule) (and session (list :sessionId session)))
                  :timeout 30
                  :success-fn
                  (lambda (answer)
                    (funcall done
                             (list (if (eq (plist-get answer :removed) :json-false)
                                       "that rule was already gone"
                                     (format "removed %s %s `%s`" (plist-get rule :decision)
                                             (plist-get rule :tool) (plist-get rule :pattern))))))
                  :error-fn failed)))))))
       :error-fn failed))))

(provide 'tether-chat-commands)
;;; tether-chat-commands.el ends here
