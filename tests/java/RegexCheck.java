import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Runs catalog regexes through java.util.regex (the dialect Spark's regexp_extract uses).
 * stdin: one case per line, tab-separated and backslash-escaped: id, regex, comma-separated group names, text.
 * stdout: id, then "nomatch" / "error:<message>" / the group values (escaped, "\0" for null), tab-separated.
 */
public class RegexCheck {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            String[] cell = line.split("\t", -1);
            String id = unescape(cell[0]);
            String regex = unescape(cell[1]);
            String[] names = cell[2].isEmpty() ? new String[0] : cell[2].split(",");
            String text = unescape(cell[3]);
            out.append(escape(id));
            try {
                Matcher m = Pattern.compile(regex).matcher(text);
                if (!m.find()) {
                    out.append("\tnomatch");
                } else {
                    for (String name : names) {
                        String value = m.group(name);
                        out.append('\t').append(value == null ? "\\0" : escape(value));
                    }
                }
            } catch (PatternSyntaxException e) {
                out.append("\terror:").append(escape(e.getDescription()));
            }
            out.append('\n');
        }
        System.out.print(out);
    }

    static String unescape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                b.append(n == 't' ? '\t' : n == 'n' ? '\n' : n == 'r' ? '\r' : n);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r");
    }
}
