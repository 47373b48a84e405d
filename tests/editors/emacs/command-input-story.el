;;; command-input-story.el --- A command's questions answered in the minibuffer  -*- lexical-binding: t; -*-

;; Environment as ask-story.el.  With commandInput "ask", the scripted model's bash command
;; asks a password (agent/ask's secret: `read-passwd', whose prompt is recorded and whose
;; answer is TETHER_SECRET_ANSWER, as the user would type it unseen), then a plain question
;; (`read-string': what the user types on standard input, in batch mode), then a second
;; command's [Y/n] (an empty line: RET alone).

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether)

(run-with-timer 90 nil (lambda () (message "command-input-story.el: watchdog fired") (kill-emacs 3)))

(defvar command-input-story-secrets nil "The prompts `read-passwd' was called with.")
(advice-add 'read-passwd :override
            (lambda (prompt &rest _)
              (push prompt command-input-story-secrets)
              (getenv "TETHER_SECRET_ANSWER")))

(setq tether-server-command
      (list (getenv "TETHER_PYTHON") (getenv "TETHER_PROXY") (getenv "TETHER_PROXY_LOG")
            (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE")
            :commandInput "ask" :autoApprove ["bash"]))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (default-directory root)
       (deadline (+ (float-time) 60)))
  (find-file (expand-file-name "src/app.py" root))
  (tether-run "log in")
  (while (and (not tether-last-result) (< (float-time) deadline))
    (accept-process-output nil 0.05))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert (json-encode `((outcome . ,(plist-get tether-last-result :outcome))
                           (secrets . ,(vconcat (reverse command-input-story-secrets))))))))
(kill-emacs 0)
