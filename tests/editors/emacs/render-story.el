;;; render-story.el --- The one renderer (tether-render.el) in `emacs --batch'  -*- lexical-binding: t; -*-

;; Environment: TETHER_EL_DIR (editors/emacs), TETHER_EVENTS (a file: a run's
;; `agent/event's, one of every kind, as JSON), TETHER_RUN_RESULT (its `agent/run'
;; result, JSON), TETHER_RESULT (where the JSON report goes).  No server: the events go
;; through the renderer as the transcript and the chat make it, then through the
;; transcript and the chat themselves.  Faces are written {FACE:text}.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether-chat)

(defun render-story-parse (text)
  "TEXT (JSON) as jsonrpc.el parses a message."
  (json-parse-string text :object-type 'plist :null-object nil :false-object :json-false))

(defun render-story-markup (string)
  "STRING with each run of one `font-lock-face' written {FACE:text}."
  (let ((pos 0) (out ""))
    (while (< pos (length string))
      (let ((next (or (next-single-property-change pos 'font-lock-face string) (length string)))
            (face (get-text-property pos 'font-lock-face string)))
        (setq out (concat out (if face
                                  (format "{%s:%s}" face (substring-no-properties string pos next))
                                (substring-no-properties string pos next)))
              pos next)))
    out))

(defun render-story-items (items)
  "The renderer's ITEMS as JSON: a line as its markup, streamed text as [\"text\", TEXT]."
  (vconcat (mapcar (lambda (item)
                     (if (stringp item) (render-story-markup item) (vector "text" (cdr item))))
                   items)))

(defun render-story-text (buffer)
  "BUFFER's text, faces marked."
  (with-current-buffer buffer (render-story-markup (buffer-string))))

(let* ((events (append (render-story-parse (with-temp-buffer
                                             (insert-file-contents (getenv "TETHER_EVENTS"))
                                             (buffer-string)))
                       nil))
       (result (render-story-parse (getenv "TETHER_RUN_RESULT")))
       (transcript tether--transcript)  ; no state: it shows no streamed text
       (chat-render (tether-chat--renderer))
       (pieces (mapcar (lambda (event)
                         (vector (plist-get event :kind)
                                 (render-story-items (tether-render-event transcript event))
                                 (render-story-items (tether-render-event chat-render event))))
                       events)))
  (dolist (event events) (tether--event nil event))
  (with-current-buffer (tether-chat--buffer)
    (setq tether-chat--render (tether-chat--renderer))
    (dolist (event events) (tether-chat--event event))
    (tether-chat--finished result))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert (json-encode `((pieces . ,(vconcat pieces))
                           (transcript . ,(render-story-text "*tether*"))
                           (chat . ,(render-story-text "*tether-chat*"))))))
  (kill-emacs 0))
