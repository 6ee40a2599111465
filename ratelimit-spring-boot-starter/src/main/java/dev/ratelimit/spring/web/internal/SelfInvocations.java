package dev.ratelimit.spring.web.internal;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;
import org.springframework.asm.Type;

/**
 * Finds the calls that a class's own methods make to its limited methods: such a call does not go through the
 * bean's proxy, so its limits never apply to it. Read from the class's bytecode once at startup, and reported
 * with a WARN per calling method, since the call may be meant to go unlimited.
 */
final class SelfInvocations {

	private static final Log logger = LogFactory.getLog(LimitCatalog.class);

	private SelfInvocations() {
	}

	/** Warns of each method of {@code type} that calls one of its {@code limited} methods directly. */
	static void warn(Class<?> type, Collection<Method> limited) {
		if (limited.isEmpty() || !logger.isWarnEnabled()) {
			return;
		}
		for (String call : find(type, limited)) {
			logger.warn(call);
		}
	}

	/** The calls of {@code limited} methods that other methods of {@code type} make, described. */
	static List<String> find(Class<?> type, Collection<Method> limited) {
		String owner = Type.getInternalName(type);
		Set<String> signatures = new LinkedHashSet<>();
		limited.forEach((method) -> signatures.add(method.getName() + Type.getMethodDescriptor(method)));
		List<String> found = new ArrayList<>();
		try (InputStream bytes = type.getClassLoader().getResourceAsStream(owner + ".class")) {
			if (bytes == null) {
				return found;
			}
			new ClassReader(bytes).accept(new ClassVisitor(Opcodes.ASM9) {

				@Override
				public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
						String[] exceptions) {
					String caller = name;
					return new MethodVisitor(Opcodes.ASM9) {

						@Override
						public void visitMethodInsn(int opcode, String called, String calledName,
								String calledDescriptor, boolean isInterface) {
							String calledSignature = calledName + calledDescriptor;
							if (called.equals(owner) && signatures.contains(calledSignature)
									&& !calledSignature.equals(caller + descriptor)) {
								found.add("@RateLimited on " + type.getName() + "." + calledName + "() never applies "
										+ "when " + type.getSimpleName() + "." + caller + "() calls it: a call from "
										+ "the bean's own methods does not go through its proxy. Call it through "
										+ "the bean, or limit the caller.");
							}
						}

					};
				}

			}, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
		}
		catch (IOException | IllegalArgumentException ex) {
			logger.debug("Could not read the bytecode of " + type.getName() + " for calls of its limited methods", ex);
		}
		return found;
	}

}
